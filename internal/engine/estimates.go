package engine

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Start estimates: when each waiting job is expected to start, from a run
// of a copy of the core forward in virtual time (package forecast). Under
// the engine's read lock the estimator copies the core and what it needs of
// each live job; the run itself is off the lock. Run keeps the estimates
// fresh in the background, one computation at a time: after a cycle that
// changed something, or once the first end the last run expected has come,
// and never sooner after the last one than it took.

// Defaults of Options.EstimateHorizon and Options.EstimateMaxDecisions.
const (
	DefaultEstimateHorizon      = 24 * time.Hour
	DefaultEstimateMaxDecisions = 50_000
)

// minEstimateGap is the least time between two background computations.
const minEstimateGap = 100 * time.Millisecond

// EstimateObserver hears that new start estimates are ready. An Observer
// that implements it is told, from the estimator's goroutine; it must be
// quick.
type EstimateObserver interface {
	ObserveEstimates()
}

// estimator is the engine's state of the start estimates.
type estimator struct {
	latest atomic.Pointer[forecast.Result]
	wake   chan struct{} // something changed since the last computation

	mu      sync.Mutex       // one computation at a time; guards what follows
	bounds  map[string]int64 // the payload's MaxRuntimeInSeconds by job ID (0: none)
	history *runHistory      // guarded by the engine's lock, not mu
}

func newEstimator() *estimator {
	return &estimator{wake: make(chan struct{}, 1), bounds: map[string]int64{}, history: newRunHistory()}
}

// StartEstimate returns the latest estimate of a waiting job's start; ok is
// false when none was made for it yet (it arrived since).
func (e *Engine) StartEstimate(id string) (forecast.Estimate, bool) {
	r := e.est.latest.Load()
	if r == nil {
		return forecast.Estimate{}, false
	}
	est, ok := r.Estimates[e.jobID(id)]
	return est, ok
}

// StartEstimates returns the latest estimates; nil before the first.
func (e *Engine) StartEstimates() *forecast.Result { return e.est.latest.Load() }

// EstimateStarts estimates now when each waiting job starts, keeps the
// result for StartEstimate and returns it. Run does this in the
// background; a synchronous engine's caller calls it when it wants fresh
// estimates.
func (e *Engine) EstimateStarts() (*forecast.Result, error) {
	e.est.mu.Lock()
	defer e.est.mu.Unlock()
	lc := e.copyLive()
	res, err := forecast.Run(lc.core, e.estimateInput(lc))
	if err != nil {
		return nil, &Error{Code: Internal, Message: "internal error", Err: err}
	}
	e.est.latest.Store(res)
	for _, o := range e.opts.Observers {
		if eo, ok := o.(EstimateObserver); ok {
			eo.ObserveEstimates()
		}
	}
	return res, nil
}

// liveFacts is what the estimator copies of a live job under the lock.
type liveFacts struct {
	id, queue, share string
	payload          string // immutable: copying it copies a pointer
	demand           []record.UnitCount
	timeout          int // timeoutConfig.attemptDurationSeconds; 0: none
	dispatched       bool
	dispatchedAt     int64 // ns
	startedAt        int64 // ms; 0 until RUNNING
}

// liveCopy is what a computation works on: a copy of the core and of what
// it needs of the live jobs.
type liveCopy struct {
	now   time.Time
	core  *core.Core
	facts []liveFacts
	hist  historySnapshot
}

// copyLive copies the core and the live jobs' facts under the read lock:
// the one part of a computation that holds the cycles back.
func (e *Engine) copyLive() liveCopy {
	e.mu.RLock()
	defer e.mu.RUnlock()
	lc := liveCopy{now: e.opts.Clock.Now(), core: e.core.Clone(), hist: e.est.history.snapshot()}
	lc.facts = make([]liveFacts, 0, lc.core.Len())
	lc.core.EachJob(func(lj core.LiveJob) bool {
		j := e.jobs[lj.ID]
		if j == nil {
			return true // cannot be: every job of the core has a record
		}
		f := liveFacts{id: j.JobID, queue: j.Queue, share: j.QuotaShareName, payload: j.ServiceRequestPayload, demand: j.Demand,
			dispatched: lj.Dispatched, dispatchedAt: j.DispatchedAt, startedAt: j.StartedAt}
		if tc := j.TimeoutConfig; tc != nil {
			f.timeout = tc.AttemptDurationSeconds
		}
		lc.facts = append(lc.facts, f)
		return true
	})
	return lc
}

// estimateInput works out, off the lock, how long each live job runs.
// Payloads are read once per job: e.est.bounds keeps what they declare,
// and forgets the jobs that ended once it holds twice the live ones.
func (e *Engine) estimateInput(lc liveCopy) forecast.Input {
	in := forecast.Input{Now: lc.now, Horizon: e.opts.EstimateHorizon, MaxDecisions: e.opts.EstimateMaxDecisions,
		Timing: make(map[string]forecast.Timing, len(lc.facts))}
	if len(e.est.bounds) > 2*len(lc.facts)+1024 {
		old := e.est.bounds
		e.est.bounds = make(map[string]int64, len(lc.facts))
		for _, f := range lc.facts {
			if mr, ok := old[f.id]; ok {
				e.est.bounds[f.id] = mr
			}
		}
	}
	for _, f := range lc.facts {
		mr, ok := e.est.bounds[f.id]
		if !ok {
			mr = maxRuntimeOf(f.payload)
			e.est.bounds[f.id] = mr
		}
		in.Timing[f.id] = timingOf(f, mr, lc.hist, lc.now)
	}
	return in
}

// maxRuntimeOf reads the payload's StoppingCondition.MaxRuntimeInSeconds;
// 0 when it has none. Most payloads are not parsed at all.
func maxRuntimeOf(payload string) int64 {
	if !strings.Contains(payload, "MaxRuntimeInSeconds") {
		return 0
	}
	r, err := trainingjob.Parse([]byte(payload))
	if err != nil {
		return 0
	}
	if n := r.StoppingCondition.MaxRuntimeInSeconds; n > 0 && n <= int64(10*365*24*3600) {
		return n
	}
	return 0
}

// timingOf tells how long a job holds capacity: its declared bound, the
// shorter of MaxRuntimeInSeconds and the time limit (both stop it), else
// the median of the run times of the jobs like it.
func timingOf(f liveFacts, maxRuntime int64, hist historySnapshot, now time.Time) forecast.Timing {
	var tm forecast.Timing
	bound := time.Duration(maxRuntime) * time.Second
	tm.Basis = forecast.MaxRuntime
	if t := time.Duration(f.timeout) * time.Second; t > 0 && (bound == 0 || t < bound) {
		bound, tm.Basis = t, forecast.TimeLimit
	}
	if bound > 0 {
		tm.Runtime = bound
		if f.dispatched {
			// The bound counts from RUNNING; a job not running yet is
			// about to.
			start := now
			if f.startedAt > 0 {
				start = time.UnixMilli(f.startedAt)
			}
			tm.End = start.Add(bound)
		}
		return tm
	}
	tm.Basis = forecast.History
	xs := hist.samples(f.queue, f.share, f.demand)
	if len(xs) == 0 {
		return forecast.Timing{}
	}
	tm.Runtime = time.Duration(xs[len(xs)/2]) * time.Millisecond
	if f.dispatched {
		// Of the jobs like it, those that ran longer than it has so far.
		held := now.UnixNano() - f.dispatchedAt
		if ms, ok := medianAbove(xs, held/1e6); ok && f.dispatchedAt > 0 {
			tm.End = time.Unix(0, f.dispatchedAt).Add(time.Duration(ms) * time.Millisecond)
		}
	}
	return tm
}

// recordRunTime adds a succeeded attempt's run time to the history, with
// the engine's lock held to write.
func (e *Engine) recordRunTime(j *record.Job, end time.Time) {
	if j.DispatchedAt > 0 {
		e.est.history.add(j.Queue, j.QuotaShareName, j.Demand, end.Sub(time.Unix(0, j.DispatchedAt)))
	}
}

// noteCycle, after a committed cycle, wakes the background estimator when
// the cycle changed something or the first end the estimates expected has
// come.
func (e *Engine) noteCycle(t *tx) {
	if e.opts.Synchronous {
		return
	}
	changed := len(t.jobs) > 0 || len(t.resources) > 0 || len(t.deleted) > 0
	if r := e.est.latest.Load(); !changed && r != nil && (r.Next.IsZero() || t.now.Before(r.Next)) {
		return
	}
	e.pokeEstimates()
}

// runEstimates keeps the estimates fresh until done is closed: it
// computes when woken, and waits after each computation at least as long
// as it took, so that it takes at most half of a CPU.
func (e *Engine) runEstimates(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-e.est.wake:
		}
		start := time.Now()
		if _, err := e.EstimateStarts(); err != nil {
			e.log.Error("estimate start times", "err", err)
		}
		took := time.Since(start)
		e.log.Debug("start times estimated", "took", took)
		select {
		case <-done:
			return
		case <-time.After(max(took, minEstimateGap)):
		}
	}
}

// startEstimates starts runEstimates and returns what stops it.
func (e *Engine) startEstimates() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { e.runEstimates(done) })
	e.pokeEstimates()
	return func() { close(done); wg.Wait() }
}

func (e *Engine) pokeEstimates() {
	select {
	case e.est.wake <- struct{}{}:
	default:
	}
}
