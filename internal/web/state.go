package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// State is what the console shows on its main page. It holds no clock
// reading, so that two builds of an unchanged server are byte-identical
// and nothing is pushed for them.
type State struct {
	Queues []Queue        `json:"queues"`
	Counts map[string]int `json:"counts"` // jobs by status
	Errors []string       `json:"errors,omitempty"`
}

// Queue is a job queue with its environments, shares and the jobs that
// hold its capacity.
type Queue struct {
	Name         string `json:"name"`
	State        string `json:"state"`
	Environments []Env  `json:"environments"`
	// Quota tells a queue with quota shares from a FIFO one, whose one
	// share has an empty name.
	Quota      bool      `json:"quota"`
	Shares     []Share   `json:"shares"`
	Dispatched []JobLine `json:"dispatched"` // SCHEDULED, STARTING and RUNNING jobs
}

// Share is a quota share's standing and the front of its queue.
type Share struct {
	ShareStanding
	// Front is the first waiting jobs in scheduling order; FrontPartial
	// tells that the share has too many waiting jobs to order them all
	// here, so Front holds only the head.
	Front        []JobLine `json:"front"`
	FrontPartial bool      `json:"frontPartial,omitempty"`
	// Warnings say what is accepted but cannot be: a limit above the
	// service environment's capacity.
	Warnings []string `json:"warnings,omitempty"`
}

// ShareStanding is the read model's Share (readmodel.ShareOf) as the
// console's scripts read it: with the strategy always present. The
// conversion from the read model's compiles only while both have the same
// fields.
type ShareStanding struct {
	Name              string `json:"name"`
	State             string `json:"state"`
	Strategy          string `json:"strategy"`
	BorrowLimit       int    `json:"borrowLimit"` // -1: unlimited
	InSharePreemption bool   `json:"inSharePreemption"`
	// MinimumRuntimeSeconds: a job of the share is not preempted in its
	// first this many seconds (sharq's setting; 0: none).
	MinimumRuntimeSeconds int    `json:"minimumRuntimeSeconds,omitempty"`
	Runnable              int    `json:"runnable"`
	Units                 []Unit `json:"units"`
}

// The capacity shapes are the read model's, which sharq's API serves too.
type (
	Env        = readmodel.Environment
	Unit       = readmodel.UnitUsage
	ShareCount = readmodel.ShareCount
	Holding    = readmodel.Holding
	Instances  = readmodel.Instances
	Loan       = readmodel.Loan
)

// JobLine is a job as the lists show it.
type JobLine struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Share    string `json:"share,omitempty"`
	Status   string `json:"status"`
	Priority int    `json:"priority"`
	// Owner is the principal that submitted the job, when the server
	// checks signatures.
	Owner string `json:"owner,omitempty"`
	// Holding is whose capacity a running job of a quota share holds.
	Holding *Holding `json:"holding,omitempty"`
	// Position is the 1-based place in the share's waiting order; 0 for a
	// job that does not wait.
	Position      int    `json:"position,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Misconfigured bool   `json:"misconfigured,omitempty"`
	Preemptions   int    `json:"preemptions,omitempty"`
	CreatedAt     int64  `json:"createdAt"`
	StartedAt     int64  `json:"startedAt,omitempty"`
	// ETA is a waiting job's estimated start; nil when none was made yet.
	ETA *StartEstimate `json:"eta,omitempty"`
}

func (c *Console) state(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, access.ActionGetConsoleState, access.AnyResource) {
		return
	}
	writeJSON(w, c.build(r.Context()))
}

// build reads the whole picture from the engine.
func (c *Console) build(ctx context.Context) State {
	st := State{Counts: c.eng.StatusCounts(), Queues: []Queue{}}
	queues, err := readmodel.Queues(ctx, c.eng)
	if err != nil {
		c.log.Error("console: list queues", "err", err)
		st.Errors = append(st.Errors, "cannot list job queues")
	} else {
		sort.Slice(queues, func(i, k int) bool { return queues[i].JobQueueName < queues[k].JobQueueName })
	}
	byQueue := readmodel.SharesByQueue(c.eng)
	for _, q := range queues {
		st.Queues = append(st.Queues, c.buildQueue(ctx, q, byQueue[q.JobQueueName]))
	}
	return st
}

func (c *Console) buildQueue(ctx context.Context, q record.JobQueue, shares []readmodel.Share) Queue {
	out := Queue{Name: q.JobQueueName, State: q.State, Quota: q.SchedulingPolicyArn != "",
		Environments: []Env{}, Shares: []Share{}, Dispatched: []JobLine{}}
	for _, o := range q.ServiceEnvironmentOrder {
		out.Environments = append(out.Environments, readmodel.EnvironmentOf(c.eng, o.ServiceEnvironment))
	}
	for _, s := range shares {
		out.Quota = out.Quota || s.Name != ""
		out.Shares = append(out.Shares, c.buildShare(ctx, q, s))
	}
	if len(out.Environments) > 0 {
		warnOversized(out.Shares, out.Environments[0])
	}
	out.Dispatched = c.dispatched(ctx, q.JobQueueName)
	c.addHoldings(out.Dispatched)
	return out
}

// warnOversized warns of the quota shares whose limit of a unit is above
// the environment's capacity (readmodel.Oversize).
func warnOversized(shares []Share, env Env) {
	for i := range shares {
		sh := &shares[i]
		if sh.Name == "" {
			continue
		}
		for _, o := range readmodel.Oversized(env.Units, sh.Units) {
			sh.Warnings = append(sh.Warnings, fmt.Sprintf("limit of %d %s above the %d of service environment %s: it can never hold more than %d",
				o.Limit, o.Unit, o.Capacity, env.Name, o.Capacity))
		}
	}
}

func (c *Console) buildShare(ctx context.Context, q record.JobQueue, s readmodel.Share) Share {
	sh := Share{ShareStanding: ShareStanding(s), Front: []JobLine{}}
	switch {
	case s.Runnable == 0:
	case s.Runnable > c.opts.MaxOrdered:
		sh.Front, sh.FrontPartial = c.head(ctx, q, s.Name), true
	default:
		in := engine.ListServiceJobsInput{JobQueue: q.JobQueueName, JobStatus: engine.StatusRunnable}
		switch {
		case s.Strategy == engine.StrategyFairShare: // a fair-share queue's share identifier
			in.Filters = []engine.JobFilter{{Name: "SHARE_IDENTIFIER", Values: []string{s.Name}}}
		case s.Name != "":
			in.Filters = []engine.JobFilter{{Name: "QUOTA_SHARE_NAME", Values: []string{s.Name}}}
		}
		waiting, complete := c.list(ctx, in, c.opts.MaxOrdered)
		if !complete { // more arrived since Shares counted them
			sh.Front, sh.FrontPartial = c.head(ctx, q, s.Name), true
			break
		}
		sh.Front = c.order(waiting)
		sh.Front = sh.Front[:min(c.opts.FrontLength, len(sh.Front))]
	}
	return sh
}

// head is a share's first waiting job alone, from the queue snapshot, for
// a share with too many waiting jobs to order them here.
func (c *Console) head(ctx context.Context, q record.JobQueue, share string) []JobLine {
	snap, err := c.eng.GetJobQueueSnapshot(ctx, q.JobQueueName)
	if err != nil {
		c.log.Error("console: queue snapshot", "queue", q.JobQueueName, "err", err)
		return []JobLine{}
	}
	front := snap.Front
	if snap.Quota {
		front = snap.ShareFronts[share]
	}
	var jobs []record.Job
	for _, f := range front[:min(1, len(front))] {
		if j, err := c.eng.DescribeServiceJob(ctx, f.JobArn); err == nil {
			jobs = append(jobs, j)
		}
	}
	return c.order(jobs)
}

// order gives waiting jobs their positions and sorts them by position.
func (c *Console) order(jobs []record.Job) []JobLine {
	out := make([]JobLine, 0, len(jobs))
	for _, j := range jobs {
		l := line(j)
		w, ok := readmodel.WaitOf(c.eng, j.JobID)
		if !ok {
			continue // dispatched or ended since it was listed
		}
		l.Position, l.Priority = w.Place, w.Priority
		l.Reason, l.Misconfigured = w.Reason, w.Misconfigured
		l.ETA = c.estimateOf(j.JobID)
		out = append(out, l)
	}
	sort.SliceStable(out, func(i, k int) bool { return out[i].Position < out[k].Position })
	return out
}

// dispatched lists the jobs holding the queue's capacity, oldest first.
func (c *Console) dispatched(ctx context.Context, queue string) []JobLine {
	out := []JobLine{}
	for _, status := range []string{engine.StatusRunning, engine.StatusStarting, engine.StatusScheduled} {
		jobs, _ := c.list(ctx, engine.ListServiceJobsInput{JobQueue: queue, JobStatus: status}, 100)
		for _, j := range jobs {
			l := line(j)
			if j.Status == engine.StatusScheduled {
				l.Reason = j.StatusReason // what its start waits for, if anything
			}
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, k int) bool {
		if out[i].Share != out[k].Share {
			return out[i].Share < out[k].Share
		}
		return out[i].CreatedAt < out[k].CreatedAt
	})
	return out
}

// list pages through a listing up to limit jobs; complete is false when
// there were more.
func (c *Console) list(ctx context.Context, in engine.ListServiceJobsInput, limit int) (jobs []record.Job, complete bool) {
	for {
		page, next, err := c.eng.ListServiceJobs(ctx, in)
		if err != nil {
			c.log.Error("console: list jobs", "queue", in.JobQueue, "status", in.JobStatus, "err", err)
			return jobs, false
		}
		jobs = append(jobs, page...)
		if next == "" {
			return jobs, true
		}
		if len(jobs) >= limit {
			return jobs, false
		}
		in.NextToken = next
	}
}

func line(j record.Job) JobLine {
	l := JobLine{ID: j.JobID, Name: j.JobName, Share: j.QuotaShareName, Status: j.Status, Priority: j.SchedulingPriority,
		Owner: j.Owner, CreatedAt: j.CreatedAt, StartedAt: j.StartedAt}
	if j.PreemptionSummary != nil {
		l.Preemptions = j.PreemptionSummary.PreemptedAttemptCount
	}
	return l
}

// addHoldings gives the lines of running jobs of quota shares whose
// capacity they hold. A job listed before it was preempted has none.
func (c *Console) addHoldings(lines []JobLine) {
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = l.ID
	}
	hs := readmodel.HoldingsOf(c.eng, ids)
	for i := range lines {
		if h, ok := hs[lines[i].ID]; ok && lines[i].Share != "" {
			lines[i].Holding = h
		}
	}
}
