package engine

import (
	"fmt"
	"runtime/debug"
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
// the engine's read lock the estimator copies the core and the times of
// the dispatched jobs; the rest is off the lock. What never changes of a
// job (its share, capacity, bounds) it reads once from the job's record
// and keeps. Run keeps the estimates fresh in the background, one
// computation at a time, while someone reads them: after a cycle that
// changed something, or once the first end the last run expected has come,
// and never sooner after the last one than four times what it took. When
// nobody has read them for estimateInterest, the estimator rests, and the
// next read computes them afresh before it answers: a server that nobody
// asks spends nothing on them.

// Defaults of Options.EstimateHorizon and Options.EstimateMaxDecisions.
const (
	DefaultEstimateHorizon      = 24 * time.Hour
	DefaultEstimateMaxDecisions = 50_000
)

// minEstimateGap is the least time between two background computations.
const minEstimateGap = 100 * time.Millisecond

// estimateRest is how many times as long as a background computation took
// the estimator rests after it: it takes at most a fifth of a CPU from the
// engine and the API, which busy servers with large queues need more.
const estimateRest = 4

// estimateInterest is how long after the last read of the estimates the
// estimator keeps them fresh in the background.
const estimateInterest = time.Minute

// EstimateObserver hears that new start estimates are ready. An Observer
// that implements it is told, from the estimator's goroutine; it must be
// quick.
type EstimateObserver interface {
	ObserveEstimates()
}

// estimator is the engine's state of the start estimates.
type estimator struct {
	latest   atomic.Pointer[forecast.Result]
	wake     chan struct{} // something changed since the last computation
	lastRead atomic.Int64  // when the estimates were last read (Unix ns)
	stale    atomic.Bool   // something changed that no computation has seen: nobody was reading

	mu      sync.Mutex           // one computation at a time; guards jobs
	jobs    map[string]*jobFacts // what never changes of the live jobs, by ID
	history *runHistory          // guarded by the engine's lock, not mu
}

func newEstimator() *estimator {
	return &estimator{wake: make(chan struct{}, 1), jobs: map[string]*jobFacts{}, history: newRunHistory()}
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
func (e *Engine) LatestStartEstimates() *forecast.Result {
	e.est.lastRead.Store(time.Now().UnixNano())
	if e.est.stale.Swap(false) {
		r, err := e.ComputeStartEstimates()
		if err == nil {
			return r
		}
		e.log.Error("estimate start times", "err", err)
	}
	return e.est.latest.Load()
}

// estimatesRead tells whether someone read the estimates lately.
func (e *Engine) estimatesRead() bool {
	return time.Since(time.Unix(0, e.est.lastRead.Load())) < estimateInterest
}

// ComputeStartEstimates estimates now when each waiting job starts, keeps
// the result for LatestStartEstimate(s) and returns it. Run does this in the
// background; a synchronous engine's caller calls it when it wants fresh
// estimates.
//
// A panic of the copied core (a broken invariant) is an error here: the
// scheduler's own state is untouched, and serving goes on.
func (e *Engine) ComputeStartEstimates() (res *forecast.Result, err error) {
	e.est.mu.Lock()
	defer e.est.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Code: Internal, Message: "internal error",
				Err: fmt.Errorf("panic while estimating start times: %v\n%s", r, debug.Stack())}
		}
	}()
	lc := e.copyLive()
	res, err = forecast.Run(lc.core, e.estimateInput(lc))
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

// jobFacts is what never changes of a job, as the estimator needs it.
type jobFacts struct {
	queue, share string
	demand       []record.UnitCount
	timeout      int    // timeoutConfig.attemptDurationSeconds; 0: none
	payload      string // until it is read: immutable, so copying it copies a pointer
	maxRuntime   int64  // the payload's MaxRuntimeInSeconds (0: none); -1 until read
}

// dispatchTimes is when a dispatched job was dispatched (ns) and started
// RUNNING (ms; 0 not yet).
type dispatchTimes struct{ dispatchedAt, startedAt int64 }

// liveCopy is what a computation works on: a copy of the core, and the
// dispatch times of its dispatched jobs.
type liveCopy struct {
	now        time.Time
	copy       *core.Copy // until indexed into core
	core       *core.Core
	dispatched map[string]dispatchTimes
	hist       historySnapshot
}

// copyLive copies the core and the dispatched jobs' times under the read
// lock, the one part of a computation that holds the cycles back, then
// indexes the copied jobs off it.
func (e *Engine) copyLive() liveCopy {
	lc := e.copyLocked()
	lc.core, lc.copy = lc.copy.Core(), nil
	return lc
}

func (e *Engine) copyLocked() liveCopy {
	e.mu.RLock()
	defer e.mu.RUnlock()
	lc := liveCopy{now: e.opts.Clock.Now(), copy: e.core.Copy(), hist: e.est.history.snapshot(), dispatched: map[string]dispatchTimes{}}
	lc.copy.EachJob(func(lj core.LiveJob) bool {
		if lj.Dispatched {
			if j := e.jobs[lj.ID]; j != nil {
				lc.dispatched[lj.ID] = dispatchTimes{dispatchedAt: j.DispatchedAt, startedAt: j.StartedAt}
			}
		}
		return true
	})
	return lc
}

// learnJobs reads, under a short read lock, what never changes of the live
// jobs the estimator has not seen yet, and forgets those that ended once
// it holds twice as many as there are live.
func (e *Engine) learnJobs(c *core.Core) {
	var missing []string
	live := 0
	c.EachJob(func(lj core.LiveJob) bool {
		live++
		if e.est.jobs[lj.ID] == nil {
			missing = append(missing, lj.ID)
		}
		return true
	})
	if len(missing) > 0 {
		e.mu.RLock()
		for _, id := range missing {
			if j := e.jobs[id]; j != nil {
				f := &jobFacts{queue: j.Queue, share: j.QuotaShareName, demand: j.Demand, payload: j.ServiceRequestPayload, maxRuntime: -1}
				if tc := j.TimeoutConfig; tc != nil {
					f.timeout = tc.AttemptDurationSeconds
				}
				e.est.jobs[id] = f
			}
		}
		e.mu.RUnlock()
	}
	if len(e.est.jobs) > 2*live+1024 {
		kept := make(map[string]*jobFacts, live)
		c.EachJob(func(lj core.LiveJob) bool {
			if f := e.est.jobs[lj.ID]; f != nil {
				kept[lj.ID] = f
			}
			return true
		})
		e.est.jobs = kept
	}
}

// estimateInput tells the forecast, off the lock, how long each live job
// runs, as it asks: only of the jobs holding capacity and those it
// dispatches. A payload is read the first time it is asked for.
func (e *Engine) estimateInput(lc liveCopy) forecast.Input {
	e.learnJobs(lc.core)
	timing := func(id string) forecast.Timing {
		f := e.est.jobs[id]
		if f == nil {
			return forecast.Timing{}
		}
		if f.maxRuntime < 0 {
			f.maxRuntime, f.payload = maxRuntimeOf(f.payload), ""
		}
		dt, dispatched := lc.dispatched[id]
		return timingOf(f, dt, dispatched, lc.hist, lc.now)
	}
	return forecast.Input{Now: lc.now, Horizon: e.opts.EstimateHorizon, MaxDecisions: e.opts.EstimateMaxDecisions, Timing: timing}
}

// maxRuntimeOf reads the payload's StoppingCondition.MaxRuntimeInSeconds;
// 0 when it has none. A payload that does not name it is not parsed.
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
func timingOf(f *jobFacts, dt dispatchTimes, dispatched bool, hist historySnapshot, now time.Time) forecast.Timing {
	var tm forecast.Timing
	bound := time.Duration(f.maxRuntime) * time.Second
	tm.Basis = forecast.MaxRuntime
	if t := time.Duration(f.timeout) * time.Second; t > 0 && (bound == 0 || t < bound) {
		bound, tm.Basis = t, forecast.TimeLimit
	}
	if bound > 0 {
		tm.Runtime = bound
		if dispatched {
			// The bound counts from RUNNING; a job not running yet is
			// about to.
			start := now
			if dt.startedAt > 0 {
				start = time.UnixMilli(dt.startedAt)
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
	if dispatched && dt.dispatchedAt > 0 {
		// Of the jobs like it, those that ran longer than it has so far.
		held := now.UnixNano() - dt.dispatchedAt
		if ms, ok := medianAbove(xs, held/1e6); ok {
			tm.End = time.Unix(0, dt.dispatchedAt).Add(time.Duration(ms) * time.Millisecond)
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
	changed := len(t.jobs) > 0 || t.jobsChanged || len(t.resources) > 0 || len(t.deleted) > 0
	if r := e.est.latest.Load(); !changed && r != nil && (r.Next.IsZero() || t.now.Before(r.Next)) {
		return
	}
	if !e.estimatesRead() {
		e.est.stale.Store(true)
		return
	}
	e.pokeEstimates()
}

// runEstimates keeps the estimates fresh until done is closed: it
// computes when woken, and rests after each computation (estimateRest).
func (e *Engine) runEstimates(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-e.est.wake:
		}
		start := time.Now()
		if _, err := e.ComputeStartEstimates(); err != nil {
			e.log.Error("estimate start times", "err", err)
		}
		took := time.Since(start)
		e.log.Debug("start times estimated", "took", took)
		select {
		case <-done:
			return
		case <-time.After(max(estimateRest*took, minEstimateGap)):
		}
	}
}

// startEstimator starts runEstimates and returns what stops it.
func (e *Engine) startEstimator() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { e.runEstimates(done) })
	e.est.stale.Store(true) // until the first read
	return func() { close(done); wg.Wait() }
}

func (e *Engine) pokeEstimates() {
	select {
	case e.est.wake <- struct{}{}:
	default:
	}
}
