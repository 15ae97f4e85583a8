package engine

import (
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/core"
)

// ShareState is a quota share's standing, for the CLI, console and metrics.
// A FIFO queue shows as one share with an empty name, a fair-share queue as
// a share per share identifier.
type ShareState struct {
	Queue             string
	Share             string
	Strategy          string
	BorrowLimit       int // -1: unlimited
	InSharePreemption bool
	// MinimumRuntime is sharq's minimum runtime before preemption (0: none).
	MinimumRuntime time.Duration
	State          string
	Units          []core.UnitUsage
	Runnable       int // RUNNABLE jobs (including those that cannot run as configured)
}

// StrategyFairShare is the Strategy of a fair-share queue's share
// identifiers, which have no limits: all they use is their own.
const StrategyFairShare = "FAIR_SHARE"

// Shares reports every queue's shares, by queue then share name.
func (e *Engine) Shares() []ShareState {
	e.rlock()
	defer e.mu.RUnlock()
	var out []ShareState
	for _, q := range e.model.Queues() {
		for _, su := range e.core.Usage(q.JobQueueName) {
			st := ShareState{Queue: q.JobQueueName, Share: su.Share, Units: su.Units, State: q.State, BorrowLimit: -1}
			if s := q.Share(su.Share); s != nil {
				st.Strategy = s.ResourceSharingConfiguration.Strategy
				if b := s.ResourceSharingConfiguration.BorrowLimit; b != nil {
					st.BorrowLimit = *b
				}
				st.InSharePreemption = s.PreemptionConfiguration.InSharePreemption == batchmodel.Enabled
				st.MinimumRuntime = secs(s.MinimumRuntimeSeconds)
				st.State = s.State
			} else if e.model.FairQueue(q) {
				st.Strategy = StrategyFairShare
			}
			st.Runnable = len(e.core.ShareFront(q.JobQueueName, su.Share, 1<<30))
			out = append(out, st)
		}
	}
	return out
}

// EnvUsage reports a service environment's limit and use per instance type.
func (e *Engine) EnvUsage(name string) []core.UnitUsage {
	e.rlock()
	defer e.mu.RUnlock()
	return e.core.EnvUsage(name)
}

// StatusCounts counts the jobs the engine holds by status.
func (e *Engine) StatusCounts() map[string]int {
	e.rlock()
	defer e.mu.RUnlock()
	out := make(map[string]int, len(e.counts))
	for s, n := range e.counts {
		out[s] = n
	}
	return out
}

// ServiceEnvironmentNames lists the environments by name.
func (e *Engine) ServiceEnvironmentNames() []string {
	e.rlock()
	defer e.mu.RUnlock()
	return e.model.EnvNames()
}

// HoldingsOf reports whose capacity the named jobs (IDs or ARNs) hold, for
// those that are dispatched, by job ID: own, or borrowed from which share,
// and whether that share can take it back.
func (e *Engine) HoldingsOf(ids []string) map[string]core.Holding {
	e.rlock()
	defer e.mu.RUnlock()
	jobIDs := make([]string, len(ids))
	for i, id := range ids {
		jobIDs[i] = e.jobID(id)
	}
	return e.core.HoldingsOf(jobIDs)
}
