package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// Epoch is the virtual time at which every simulation starts. A fixed
// instant keeps job records, and so the run, identical between runs.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options tune a simulation.
type Options struct {
	// CheckpointInterval is how often jobs checkpoint: a preempted attempt
	// loses the work since its last checkpoint and its next attempt resumes
	// from there. 0: jobs do not checkpoint and restart from scratch.
	CheckpointInterval time.Duration
	// StartupDelay is how long an attempt takes from SCHEDULED to RUNNING.
	StartupDelay time.Duration
	// TickInterval is how often engine housekeeping (time limit actions,
	// retention) runs in virtual time. Each tick costs a pass over the
	// engine's jobs, so the default is 5 minutes when a queue has time limit
	// actions (they wait at least 600 s) and an hour otherwise, when only
	// ended jobs are to be forgotten.
	TickInterval time.Duration
	// Buckets is the resolution of the time series (default 240).
	Buckets int
	// Timeline records every dispatch, preemption and end in the report.
	Timeline bool
	// Progress, when set, hears how many of the jobs have ended, now and
	// then.
	Progress func(done, total int)
}

// simJob is the simulation's state of one workload job.
type simJob struct {
	id          string
	remaining   time.Duration // work left to run
	attempt     *attempt
	stoppedWork time.Duration // work lost by the last stop, until its cause is known
}

// Sim is one simulation run. It is not safe for concurrent use.
type Sim struct {
	opts Options
	w    *Workload
	cfg  *clusterconfig.Config
	eng  *engine.Engine

	now      time.Duration
	seq      uint64
	events   eventHeap
	next     int // the next workload job to submit
	jobs     []simJob
	byID     map[string]int32
	attempts map[string]*attempt
	col      *collector
	ended    int
}

// clock is the virtual clock the engine reads.
type clock struct{ s *Sim }

func (c clock) Now() time.Time { return Epoch.Add(c.s.now) }

// New prepares a simulation of w on cfg (w.Config when cfg is nil).
func New(ctx context.Context, w *Workload, cfg *clusterconfig.Config, opts Options) (*Sim, error) {
	if cfg == nil {
		cfg = w.Config
	}
	if cfg == nil {
		return nil, errors.New("sim: no cluster config: give one, or use a workload that brings its own")
	}
	if err := checkWorkload(w, cfg); err != nil {
		return nil, err
	}
	if opts.TickInterval <= 0 {
		opts.TickInterval = defaultTick(cfg)
	}
	if opts.Buckets <= 0 {
		opts.Buckets = 240
	}
	s := &Sim{opts: opts, w: w, cfg: cfg, jobs: make([]simJob, len(w.Jobs)), byID: make(map[string]int32, len(w.Jobs)), attempts: map[string]*attempt{}}
	for i, j := range w.Jobs {
		s.jobs[i] = simJob{id: j.ID, remaining: j.Runtime}
		s.byID[j.ID] = int32(i)
	}
	s.col = newCollector(s)
	eng, err := engine.New(ctx, engine.Options{
		Store: memstore.New(), Executor: simExecutor{s}, Clock: clock{s}, Synchronous: true,
		NewID:             func() string { return "" }, // every ID comes with SubmitAll
		Observers:         []engine.Observer{s.col},
		MaxSharesPerQueue: max(20, cfg.MaxShares()), MaxCapacityLimits: 5,
		// Ended jobs are of no more use to the engine: forget them soon,
		// so a long trace does not hold every job in memory.
		Retention: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("sim: start engine: %w", err)
	}
	s.eng = eng
	if err := clusterconfig.Apply(ctx, eng, cfg); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return s, nil
}

func defaultTick(cfg *clusterconfig.Config) time.Duration {
	for _, q := range cfg.JobQueues {
		if len(q.JobStateTimeLimitActions) > 0 {
			return 5 * time.Minute
		}
	}
	return time.Hour
}

// checkWorkload fills in each job's queue when the config has one
// quota-share queue, and checks that every job's queue and share exist.
func checkWorkload(w *Workload, cfg *clusterconfig.Config) error {
	var only string
	for i := range cfg.JobQueues {
		if q := &cfg.JobQueues[i]; cfg.QuotaQueue(q) {
			if only != "" {
				only = "\x00" // more than one
				break
			}
			only = q.Name
		}
	}
	shares := map[string]bool{}
	for _, q := range cfg.JobQueues {
		for _, sh := range q.QuotaShares {
			shares[q.Name+"\x00"+sh.Name] = true
		}
	}
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if j.Queue == "" {
			if only == "" || only == "\x00" {
				return fmt.Errorf("job %s: no queue given and the config has not exactly one quota-share queue", j.ID)
			}
			j.Queue = only
		}
		if cfg.Queue(j.Queue) == nil {
			return fmt.Errorf("job %s: job queue %s is not in the config", j.ID, j.Queue)
		}
		if j.Share != "" && !shares[j.Queue+"\x00"+j.Share] {
			return fmt.Errorf("job %s: quota share %s is not in job queue %s", j.ID, j.Share, j.Queue)
		}
	}
	return nil
}

func (s *Sim) push(e event) {
	s.seq++
	e.seq = s.seq
	s.events.push(e)
}

// Run replays the workload until every job has ended or can never run,
// and reports.
func (s *Sim) Run(ctx context.Context) (*Report, error) {
	for i, j := range s.w.Jobs {
		for k, c := range j.Changes {
			s.push(event{at: c.At, kind: evChange, job: int32(i), change: int32(k)})
		}
	}
	s.push(event{at: s.opts.TickInterval, kind: evTick})
	for step := 0; ; step++ {
		if step%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s.tellProgress()
		}
		more, err := s.step(ctx)
		if err != nil {
			return nil, fmt.Errorf("sim: at %s: %w", s.now, err)
		}
		if !more {
			break
		}
	}
	s.tellProgress()
	return s.col.report(), nil
}

func (s *Sim) tellProgress() {
	if s.opts.Progress != nil {
		s.opts.Progress(s.ended, len(s.jobs))
	}
}

// step handles the next event: at one instant, submissions come first,
// all in one cycle, then queued events in the order they were queued.
func (s *Sim) step(ctx context.Context) (bool, error) {
	if s.next < len(s.w.Jobs) && (len(s.events) == 0 || s.w.Jobs[s.next].At <= s.events[0].at) {
		s.now = s.w.Jobs[s.next].At
		return true, s.submitDue(ctx)
	}
	if len(s.events) == 0 {
		return false, nil
	}
	ev := s.events.pop()
	s.now = ev.at
	switch ev.kind {
	case evChange:
		return true, s.change(ctx, ev.job, ev.change)
	case evRunning, evEnd:
		return true, s.progress(ctx, ev)
	case evTick:
		// Housekeeping goes on only while something else is to come.
		if len(s.events) > 0 || s.next < len(s.w.Jobs) {
			s.push(event{at: s.now + s.opts.TickInterval, kind: evTick})
		}
		return true, s.eng.Tick(ctx)
	}
	return false, fmt.Errorf("unknown event kind %d", ev.kind)
}

// submitDue submits every job due now in one cycle.
func (s *Sim) submitDue(ctx context.Context) error {
	var ins []engine.SubmitServiceJobInput
	var ids []string
	first := s.next
	for s.next < len(s.w.Jobs) && s.w.Jobs[s.next].At == s.now {
		j := &s.w.Jobs[s.next]
		ins = append(ins, submitInput(j))
		ids = append(ids, j.ID)
		s.col.submitted(int32(s.next))
		s.next++
	}
	_, errs, err := s.eng.SubmitAll(ctx, ins, ids)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	for k, err := range errs {
		if err == nil {
			continue
		}
		if engine.ErrorCode(err) == engine.Internal {
			return fmt.Errorf("submit %s: %w", ids[k], err)
		}
		s.col.rejected(int32(first+k), engine.ErrorMessage(err))
		s.ended++
	}
	return nil
}

func submitInput(j *Job) engine.SubmitServiceJobInput {
	in := engine.SubmitServiceJobInput{
		JobName: j.Name, JobQueue: j.Queue, ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: j.Share,
		ServiceRequestPayload: payload(j.InstanceType, j.Count), SchedulingPriority: &j.Priority,
	}
	if in.JobName == "" {
		in.JobName = j.ID
	}
	if j.PreemptionRetries != nil {
		in.PreemptionConfiguration = &engine.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: j.PreemptionRetries}
	}
	return in
}

// payload is the smallest CreateTrainingJob request that says what the job
// needs.
func payload(unit string, count int) string {
	return `{"ResourceConfig":{"InstanceType":"` + unit + `","InstanceCount":` + strconv.Itoa(count) + `}}`
}

// change applies a trace's priority change or cancellation; one for a job
// that has ended changes nothing.
func (s *Sim) change(ctx context.Context, i, k int32) error {
	c := s.w.Jobs[i].Changes[k]
	id := s.jobs[i].id
	var err error
	if c.Cancel {
		err = s.eng.TerminateServiceJob(ctx, id, "Cancelled by the trace")
	} else {
		_, err = s.eng.UpdateServiceJob(ctx, id, c.Priority)
	}
	if err != nil && engine.ErrorCode(err) == engine.Internal {
		return fmt.Errorf("change job %s: %w", id, err)
	}
	return nil
}

// progress handles an attempt event and every other one at the same
// instant, delivering their updates to the engine in one cycle.
func (s *Sim) progress(ctx context.Context, ev event) error {
	var us []executor.Update
	for {
		us = s.attemptUpdates(ev, us)
		if len(s.events) == 0 || s.events[0].at != ev.at || (s.events[0].kind != evRunning && s.events[0].kind != evEnd) {
			break
		}
		ev = s.events.pop()
	}
	if len(us) == 0 {
		return nil
	}
	return s.eng.DeliverAll(ctx, us)
}

// attemptUpdates advances one attempt: up (STARTING, RUNNING, and its end
// scheduled) or done (SUCCEEDED). A stopped attempt's events are stale.
func (s *Sim) attemptUpdates(ev event, us []executor.Update) []executor.Update {
	at := ev.att
	if at.stopped {
		return us
	}
	j := &s.jobs[at.job]
	update := func(st executor.State) executor.Update {
		return executor.Update{AttemptID: at.id, JobID: j.id, State: st, At: Epoch.Add(s.now)}
	}
	if ev.kind == evRunning {
		at.running, at.runningAt = true, s.now
		s.push(event{at: s.now + j.remaining, kind: evEnd, att: at})
		return append(us, update(executor.Starting), update(executor.Running))
	}
	delete(s.attempts, at.id)
	at.stopped = true
	j.attempt = nil
	j.remaining = 0
	return append(us, update(executor.Succeeded))
}
