package readmodel

import (
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// Wait is where a waiting job stands in its share and why it waits.
type Wait struct {
	// Place is the 1-based place in the share's RUNNABLE order (jobs that
	// cannot run as configured come last).
	Place    int
	Priority int
	// Reason is why the job waits, as DescribeServiceJob's statusReason
	// says it; Misconfigured tells that it can never run with the current
	// configuration (a MISCONFIGURATION reason).
	Reason        string
	Misconfigured bool
}

// WaitOf is where a job waits; ok is false for a job the scheduler does
// not hold (ended or unknown) or has dispatched.
func WaitOf(eng Engine, jobID string) (w Wait, ok bool) {
	st, ok := eng.JobPosition(jobID)
	if !ok || st.Dispatched {
		return Wait{}, false
	}
	return Wait{Place: st.Position + 1, Priority: st.Priority, Reason: st.Reason.String(), Misconfigured: st.Reason.Misconfiguration()}, true
}

// PositionOf is where the job of record j stands. The record gives status
// and priority for every job; the scheduler's view adds the place of a
// waiting one and its estimated start. Holdings are added apart, for many
// jobs at once (AddHoldings).
func PositionOf(eng Engine, j record.Job) Position {
	p := Position{
		JobID: j.JobID, Queue: QueueName(j.JobQueue), Share: j.QuotaShareName, Status: j.Status,
		Priority: j.SchedulingPriority, Owner: j.Owner,
	}
	if j.PreemptionSummary != nil {
		p.Preemptions = j.PreemptionSummary.PreemptedAttemptCount
	}
	if w, ok := WaitOf(eng, j.JobID); ok && j.Status == engine.StatusRunnable {
		p.Place, p.Reason, p.Misconfigured = w.Place, w.Reason, w.Misconfigured
		p.ETA = LatestEstimate(eng.LatestStartEstimates(), j.JobID)
	}
	return p
}

// AddHoldings says whose capacity each running job of a quota share holds.
func AddHoldings(eng Engine, ps []Position) {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.JobID
	}
	hs := HoldingsOf(eng, ids)
	for i, p := range ps {
		if hd, ok := hs[p.JobID]; ok && p.Share != "" && slices.Contains(runningStatuses, p.Status) {
			ps[i].Holding = hd
		}
	}
}

// runningStatuses are those of a job that holds capacity.
var runningStatuses = []string{engine.StatusScheduled, engine.StatusStarting, engine.StatusRunning}

// HoldingsOf is whose capacity each of the jobs holds, for those that hold
// any.
func HoldingsOf(eng Engine, ids []string) map[string]*Holding {
	hs := eng.HoldingsOf(ids)
	out := make(map[string]*Holding, len(hs))
	for id, hd := range hs {
		out[id] = HoldingOf(hd)
	}
	return out
}

// HoldingOf is a job's holding.
func HoldingOf(hd core.Holding) *Holding {
	out := &Holding{Own: []Instances{}, Borrowed: []Loan{}}
	for _, o := range hd.Own {
		out.Own = append(out.Own, Instances{Unit: o.Unit, Count: o.Count})
	}
	for _, l := range hd.Loans {
		out.Borrowed = append(out.Borrowed, Loan{Unit: l.Unit, Count: l.Count, Lender: l.Lender, Reclaimable: l.Reclaimable})
	}
	return out
}

// QueueName takes the name out of a job queue ARN (…:job-queue/NAME); a
// bare name is returned as it is.
func QueueName(arn string) string { return lastSegment(arn, "job-queue/") }
