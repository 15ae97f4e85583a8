package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
	"github.com/sharq-dev/sharq/internal/trainingjob"
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
	fair map[string]bool // fair-share queues, whose jobs' Share is a share identifier
	eng  *engine.Engine

	now      time.Duration
	seq      uint64
	events   eventHeap
	next     int         // the next workload job to submit
	changes  []dueChange // the trace's priority changes and cancellations, in order
	nextCh   int         // the next of changes
	jobs     []simJob
	live     map[string]int32 // jobs submitted and not ended, by ID: few, so look-ups hit the cache
	attempts map[string]*attempt
	col      *collector
	ended    int
	payloads map[payloadKey]string
	// wakeAt is the earliest evWake queued, 0 when none: the engine asks
	// for a cycle when a minimum runtime ends (Engine.NextWake).
	wakeAt time.Duration
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
	s := &Sim{opts: opts, w: w, cfg: cfg, jobs: make([]simJob, len(w.Jobs)), live: map[string]int32{}, attempts: map[string]*attempt{}}
	s.fair = map[string]bool{}
	for i := range cfg.JobQueues {
		if q := &cfg.JobQueues[i]; cfg.FairQueue(q) {
			s.fair[q.Name] = true
		}
	}
	for i, j := range w.Jobs {
		s.jobs[i] = simJob{id: j.ID, remaining: j.Runtime}
	}
	s.col = newCollector(s)
	eng, err := engine.New(ctx, engine.Options{
		Store: memstore.New(), Executor: simExecutor{s},
		// The simulator drives the engine on its clock, and the collector
		// takes the bare transitions: no job records, no events.
		Driver:            &engine.Driver{Clock: clock{s}, Sink: s.col},
		NewID:             func() string { return "" }, // every ID comes with its Instant
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
		if q := cfg.Queue(j.Queue); cfg.FairQueue(q) {
			// Share is the job's share identifier: any will do, but one
			// is required.
			if j.Share == "" {
				return fmt.Errorf("job %s: job queue %s is a fair-share queue; the job needs a share (its share identifier)", j.ID, j.Queue)
			}
			continue
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
			s.changes = append(s.changes, dueChange{at: c.At, job: int32(i), change: int32(k)})
		}
	}
	slices.SortStableFunc(s.changes, func(a, b dueChange) int { return cmp.Compare(a.at, b.at) })
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

// step handles everything due at the next instant in one cycle (spec
// 2.3): the ends and progress of attempts, the submissions, the trace's
// priority changes and cancellations, and housekeeping.
func (s *Sim) step(ctx context.Context) (bool, error) {
	if !s.more() {
		return false, nil
	}
	s.now = time.Duration(math.MaxInt64)
	if len(s.events) > 0 {
		s.now = s.events[0].at
	}
	if s.next < len(s.w.Jobs) {
		s.now = min(s.now, s.w.Jobs[s.next].At)
	}
	if s.nextCh < len(s.changes) {
		s.now = min(s.now, s.changes[s.nextCh].at)
	}
	in := engine.Instant{NoRecords: true} // apply reads only the errors
	wake := false
	for ; s.nextCh < len(s.changes) && s.changes[s.nextCh].at == s.now; s.nextCh++ {
		c := s.changes[s.nextCh]
		in.Changes = append(in.Changes, s.change(c.job, c.change))
	}
	for len(s.events) > 0 && s.events[0].at == s.now {
		ev := s.events.pop()
		switch ev.kind {
		case evRunning, evEnd:
			in.Updates = s.attemptUpdates(ev, in.Updates)
		case evStopped:
			in.Updates = append(in.Updates, executor.Update{AttemptID: ev.att.id, JobID: s.jobs[ev.att.job].id,
				State: executor.Stopped, Reason: "Stopped", At: Epoch.Add(s.now)})
		case evTick:
			in.Housekeeping = true
		case evWake:
			wake = true
			if s.wakeAt == s.now {
				s.wakeAt = 0
			}
		default:
			return false, fmt.Errorf("unknown event kind %d", ev.kind)
		}
	}
	first := s.next
	for s.next < len(s.w.Jobs) && s.w.Jobs[s.next].At == s.now {
		j := &s.w.Jobs[s.next]
		in.Submits = append(in.Submits, s.submitInput(j))
		in.IDs = append(in.IDs, j.ID)
		if _, dup := s.live[j.ID]; !dup { // else the engine refuses it
			s.live[j.ID] = int32(s.next)
		}
		s.col.submitted(int32(s.next))
		s.next++
	}
	if len(in.Updates)+len(in.Submits)+len(in.Changes) > 0 || in.Housekeeping || wake {
		if err := s.apply(ctx, in, first); err != nil {
			return false, err
		}
		s.queueWake()
	}
	// Housekeeping goes on only while something else is to come.
	if in.Housekeeping && s.more() {
		s.push(event{at: s.now + s.opts.TickInterval, kind: evTick})
	}
	return true, nil
}

// queueWake queues a cycle for when the engine wants one, unless one comes
// no later.
func (s *Sim) queueWake() {
	at, ok := s.eng.NextWake()
	if !ok {
		return
	}
	d := max(at.Sub(Epoch), s.now+1)
	if s.wakeAt != 0 && s.wakeAt <= d {
		return
	}
	s.wakeAt = d
	s.push(event{at: d, kind: evWake})
}

// apply runs the instant's cycle; refused submissions end their jobs, and
// refused changes (of a job that has ended, say) change nothing.
func (s *Sim) apply(ctx context.Context, in engine.Instant, first int) error {
	res, err := s.eng.ApplyInstant(ctx, in)
	if err != nil {
		return err
	}
	for k, err := range res.SubmitErrs {
		if err == nil {
			continue
		}
		if engine.ErrorCode(err) == engine.Internal {
			return fmt.Errorf("submit %s: %w", in.IDs[k], err)
		}
		i := int32(first + k)
		if l, ok := s.live[in.IDs[k]]; ok && l == i {
			delete(s.live, in.IDs[k])
		}
		s.col.rejected(i, engine.ErrorMessage(err))
		s.ended++
	}
	for k, err := range res.ChangeErrs {
		if err != nil && engine.ErrorCode(err) == engine.Internal {
			return fmt.Errorf("change job %s: %w", in.Changes[k].Job, err)
		}
	}
	return nil
}

func (s *Sim) submitInput(j *Job) engine.SubmitServiceJobInput {
	in := engine.SubmitServiceJobInput{
		JobName: j.Name, JobQueue: j.Queue, ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: j.Share,
		ServiceRequestPayload: s.payload(j), SchedulingPriority: &j.Priority,
	}
	if s.fair[j.Queue] {
		in.QuotaShareName, in.ShareIdentifier = "", j.Share
	}
	if in.JobName == "" {
		in.JobName = j.ID
	}
	if j.PreemptionRetries != nil {
		in.PreemptionConfiguration = &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: j.PreemptionRetries}
	}
	return in
}

// payload is the smallest CreateTrainingJob request that says what the job
// needs; jobs that need the same share one string.
func (s *Sim) payload(j *Job) string {
	k := payloadKey{j.InstanceType, j.Count, ""}
	if len(j.Groups) > 0 {
		k.groups = formatGroups(j.Groups)
	}
	if p, ok := s.payloads[k]; ok {
		return p
	}
	r := trainingjob.New(j.InstanceType, j.Count)
	if len(j.Groups) > 0 {
		r.ResourceConfig = &trainingjob.ResourceConfig{}
		for i, g := range j.Groups {
			r.ResourceConfig.InstanceGroups = append(r.ResourceConfig.InstanceGroups,
				trainingjob.InstanceGroup{InstanceType: g.Type, InstanceCount: g.Count, InstanceGroupName: "group-" + strconv.Itoa(i+1)})
		}
	}
	b, err := r.Marshal()
	if err != nil {
		panic(err) // only hyperparameters that are not JSON fail to marshal
	}
	if s.payloads == nil {
		s.payloads = map[payloadKey]string{}
	}
	s.payloads[k] = string(b)
	return string(b)
}

type payloadKey struct {
	unit   string
	count  int
	groups string // formatGroups of a job of several groups
}

// more tells whether anything is still to come: an event, a submission or
// a change.
func (s *Sim) more() bool {
	return len(s.events) > 0 || s.next < len(s.w.Jobs) || s.nextCh < len(s.changes)
}

// dueChange is the change-th change of a job, due at a time.
type dueChange struct {
	at          time.Duration
	job, change int32
}

// change is a trace's priority change or cancellation of job i.
func (s *Sim) change(i, k int32) engine.JobChange {
	c := s.w.Jobs[i].Changes[k]
	return engine.JobChange{Job: s.jobs[i].id, Priority: c.Priority, Terminate: c.Cancel, Reason: "Cancelled by the trace"}
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
