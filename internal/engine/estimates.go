package engine

import (
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/estimator"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

// Start estimates: when each waiting job is expected to start. Package
// estimator keeps them (its goroutine, the run-time history, what never
// changes of a job); the engine feeds it what each cycle did and lends it
// an estimateSource, which it reads only while it computes.

// Defaults of Options.EstimateHorizon and Options.EstimateMaxDecisions.
const (
	DefaultEstimateHorizon      = estimator.DefaultHorizon
	DefaultEstimateMaxDecisions = estimator.DefaultMaxDecisions
)

// EstimateObserver hears that new start estimates are ready. An Observer
// that implements it is told, from the estimator's goroutine; it must be
// quick.
type EstimateObserver = estimator.Observer

// newEstimator makes the engine's estimator, reading from the engine and
// telling the observers that hear of estimates.
func newEstimator(e *Engine) *estimator.Estimator {
	var obs []estimator.Observer
	for _, o := range e.opts.Observers {
		if eo, ok := o.(EstimateObserver); ok {
			obs = append(obs, eo)
		}
	}
	return estimator.New(estimateSource{e}, estimator.Config{Horizon: e.opts.EstimateHorizon,
		MaxDecisions: e.opts.EstimateMaxDecisions, Observers: obs, Logger: e.opts.Logger})
}

// LatestStartEstimate returns the latest estimate of a waiting job's start;
// ok is false when none was made for it yet (it arrived since).
func (e *Engine) LatestStartEstimate(id string) (forecast.Estimate, bool) {
	r := e.LatestStartEstimates()
	if r == nil {
		return forecast.Estimate{}, false
	}
	est, ok := r.Estimates[e.jobID(id)]
	return est, ok
}

// LatestStartEstimates returns the latest estimates of all waiting jobs;
// nil before the first. A read after the estimator rested computes them
// first.
func (e *Engine) LatestStartEstimates() *forecast.Result { return e.est.Latest() }

// ComputeStartEstimates estimates now when each waiting job starts, keeps
// the result for LatestStartEstimate(s) and returns it. Run does this in the
// background; a driven engine's caller calls it when it wants fresh
// estimates.
//
// A panic of the copied core (a broken invariant) is an error here: the
// scheduler's own state is untouched, and serving goes on.
func (e *Engine) ComputeStartEstimates() (*forecast.Result, error) {
	res, err := e.est.Compute()
	if err != nil {
		return nil, &Error{Code: Internal, Message: "internal error", Err: err}
	}
	return res, nil
}

// estimateSource is the engine as its estimator reads it, under the read
// lock, only while a computation runs.
type estimateSource struct{ e *Engine }

// CopyLive copies the core and the dispatched jobs' times under the read
// lock; the estimator indexes the copied jobs off it.
func (s estimateSource) CopyLive() estimator.Live {
	e := s.e
	e.mu.RLock()
	defer e.mu.RUnlock()
	lv := estimator.Live{Now: e.opts.Clock.Now(), Copy: e.core.Copy(), Dispatched: map[string]estimator.Dispatch{}}
	lv.Copy.EachJob(func(lj core.LiveJob) bool {
		if lj.Dispatched {
			if j := e.jobs[lj.ID]; j != nil {
				lv.Dispatched[lj.ID] = estimator.Dispatch{DispatchedAt: j.DispatchedAt, StartedAt: j.StartedAt}
			}
		}
		return true
	})
	return lv
}

// JobFacts reads what never changes of the jobs, under a short read lock.
func (s estimateSource) JobFacts(ids []string) []estimator.Facts {
	e := s.e
	out := make([]estimator.Facts, 0, len(ids))
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, id := range ids {
		j := e.jobs[id]
		if j == nil {
			continue
		}
		f := estimator.Facts{ID: id, Queue: j.Queue, Share: j.QuotaShareName, Demand: j.Demand, Payload: j.ServiceRequestPayload}
		if tc := j.TimeoutConfig; tc != nil {
			f.Timeout = tc.AttemptDurationSeconds
		}
		out = append(out, f)
	}
	return out
}

// recordRunTime hands the estimator a succeeded attempt's run time, from
// dispatch to its end.
func (e *Engine) recordRunTime(j *record.Job, end time.Time) {
	if j.DispatchedAt > 0 {
		e.est.RecordRunTime(j.Queue, j.QuotaShareName, j.Demand, end.Sub(time.Unix(0, j.DispatchedAt)))
	}
}

// noteCycle tells the estimator, after a committed cycle, whether the
// cycle changed something.
func (e *Engine) noteCycle(c *cycle) {
	if e.driven {
		return // no estimator runs: Run starts it
	}
	changed := len(c.jobs) > 0 || len(c.resources) > 0 || len(c.deleted) > 0
	e.est.NoteCycle(changed, c.now)
}

// startEstimator starts the estimator's background work and returns what
// stops it.
func (e *Engine) startEstimator() (stop func()) { return e.est.Start() }
