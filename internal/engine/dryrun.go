package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

// DryRunID is the job ID a dry-run gives the job it tries.
const DryRunID = "dry-run"

// DryRun is what would happen if a job were submitted now.
type DryRun struct {
	Queue string
	Share string
	// Dispatched: the job would be SCHEDULED at once, on Own capacity of
	// its share and Borrowed capacity of others; Via is idle, reclaim
	// (cross-share preemption) or in-share.
	Dispatched bool
	Own        []core.UnitCount
	Borrowed   []core.UnitCount
	Via        string
	// Preempts are the jobs it would stop.
	Preempts []DryRunVictim
	// Otherwise it would wait: Reason is its statusReason; Position its
	// 1-based place among its share's RUNNABLE jobs.
	Reason           string
	Misconfiguration bool
	Position         int
}

// DryRunVictim is a job a dry-run's job would preempt.
type DryRunVictim struct {
	JobID    string
	JobName  string
	Share    string
	Priority int
	Kind     string // cross-share or in-share
	// Requeued is false when the preemption would fail the job (its
	// preemption retries exhausted).
	Requeued bool
}

// DryRunSubmit answers what SubmitServiceJob would do with in right now,
// changing nothing: the submission is checked as a real one is, then tried
// on a scheduling core rebuilt from the engine's records (the same code
// path as the real scheduler, on a copy). It costs O(live jobs).
func (e *Engine) DryRunSubmit(ctx context.Context, in SubmitServiceJobInput) (DryRun, error) {
	req, demand, err := readPayload(in.ServiceRequestPayload, in.Request)
	if err != nil {
		return DryRun{}, err
	}
	if err := e.checkRunnable(req); err != nil {
		return DryRun{}, err
	}
	e.rlock()
	defer e.mu.RUnlock()
	q, err := e.findQueue(in.JobQueue)
	if err != nil {
		return DryRun{}, err
	}
	if err := e.model.Accepts(q, in.QuotaShareName, in.ShareIdentifier); err != nil {
		return DryRun{}, modelErr(err)
	}
	c, err := e.copyCore()
	if err != nil {
		return DryRun{}, &Error{Code: Internal, Message: "internal error", Err: err}
	}
	now := e.opts.Clock.Now()
	c.Step(now) // settle, so what follows is the submission's doing
	prio := 0
	if in.SchedulingPriority != nil {
		prio = *in.SchedulingPriority
	}
	j := &record.Job{
		JobID: DryRunID, SchedulingPriority: prio, QuotaShareName: in.QuotaShareName, ShareIdentifier: in.ShareIdentifier, PreemptionConfiguration: in.PreemptionConfiguration,
		Queue: q.JobQueueName, QueuedAt: max(now.UnixNano(), e.lastQ+1), Demand: demand,
	}
	if err := coreErr(c.Apply(e.submitEvent(j))); err != nil {
		return DryRun{}, err
	}
	return e.dryRunResult(c, q.JobQueueName, cmp.Or(in.QuotaShareName, in.ShareIdentifier), c.Step(now)), nil
}

// copyCore rebuilds a core from the records, as load does after a restart.
func (e *Engine) copyCore() (*core.Core, error) {
	c := core.New()
	evs, err := e.model.CoreEvents()
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if err := c.Apply(ev); err != nil {
			return nil, err
		}
	}
	for _, id := range sortedKeys(e.jobs) {
		j := e.jobs[id]
		var err error
		switch {
		case dispatchedStatus(j.Status):
			err = c.Apply(core.Restore{Submit: e.submitEvent(j), DispatchedAt: j.DispatchedAt})
		case !terminal(j.Status):
			err = c.Apply(e.submitEvent(j))
		}
		if err != nil {
			return nil, err
		}
	}
	// Fair-share usage is history the records do not hold: the live
	// core's is carried over.
	for _, q := range e.model.Queues() {
		for _, u := range e.core.FairUsages(q.JobQueueName) {
			if err := c.Apply(core.SetUsage{Queue: q.JobQueueName, Share: u.Share, Usage: u.Usage, At: u.At}); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dryRunResult reads the decisions about the tried job.
func (e *Engine) dryRunResult(c *core.Core, queue, share string, ds core.Decisions) DryRun {
	out := DryRun{Queue: queue, Share: share}
	for _, d := range ds.List {
		switch {
		case d.Kind == core.Dispatch && d.Job == DryRunID:
			out.Dispatched, out.Via = true, d.Via.String()
			out.Own, out.Borrowed = d.Own, d.Borrowed
		case d.Kind == core.Preempt && d.For == DryRunID:
			v := DryRunVictim{JobID: d.Job, Share: d.Share, Kind: d.Preemption.String(), Requeued: d.Requeued}
			if j := e.jobs[d.Job]; j != nil {
				v.JobName, v.Priority = j.JobName, j.SchedulingPriority
			}
			out.Preempts = append(out.Preempts, v)
		}
	}
	if out.Dispatched {
		return out
	}
	out.Preempts = nil // a head held back preempts nobody yet
	if st, ok := c.Job(DryRunID); ok && !st.Dispatched {
		out.Reason = st.Reason.String()
		out.Misconfiguration = st.Reason.Misconfiguration()
		out.Position = st.Position + 1
	}
	return out
}
