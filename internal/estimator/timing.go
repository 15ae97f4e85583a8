package estimator

import (
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// jobFacts is what the estimator keeps of a job: its Facts, and the
// payload's bound once read.
type jobFacts struct {
	queue, share string
	demand       []record.UnitCount
	timeout      int    // timeoutConfig.attemptDurationSeconds; 0: none
	payload      string // until it is read: immutable, so copying it copies a pointer
	maxRuntime   int64  // the payload's MaxRuntimeInSeconds (0: none); -1 until read
}

// learn asks the source, in one read, what never changes of the live jobs
// the estimator has not seen yet, and forgets those that ended once it
// holds twice as many as there are live. x.mu is held.
func (x *Estimator) learn(c *core.Core) {
	var missing []string
	live := 0
	c.EachJob(func(lj core.LiveJob) bool {
		live++
		if x.jobs[lj.ID] == nil {
			missing = append(missing, lj.ID)
		}
		return true
	})
	if len(missing) > 0 {
		for _, f := range x.src.JobFacts(missing) {
			x.jobs[f.ID] = &jobFacts{queue: f.Queue, share: f.Share, demand: f.Demand, timeout: f.Timeout, payload: f.Payload, maxRuntime: -1}
		}
	}
	if len(x.jobs) > 2*live+1024 {
		kept := make(map[string]*jobFacts, live)
		c.EachJob(func(lj core.LiveJob) bool {
			if f := x.jobs[lj.ID]; f != nil {
				kept[lj.ID] = f
			}
			return true
		})
		x.jobs = kept
	}
}

// input tells the forecast how long each live job runs, as it asks: only
// of the jobs holding capacity and those it dispatches. A payload is read
// the first time it is asked for. x.mu is held.
func (x *Estimator) input(lv Live, c *core.Core, hist historySnapshot) forecast.Input {
	x.learn(c)
	timing := func(id string) forecast.Timing {
		f := x.jobs[id]
		if f == nil {
			return forecast.Timing{}
		}
		if f.maxRuntime < 0 {
			f.maxRuntime, f.payload = maxRuntimeOf(f.payload), ""
		}
		dt, dispatched := lv.Dispatched[id]
		return timingOf(f, dt, dispatched, hist, lv.Now)
	}
	return forecast.Input{Now: lv.Now, Horizon: x.cfg.Horizon, MaxDecisions: x.cfg.MaxDecisions, Timing: timing}
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
func timingOf(f *jobFacts, dt Dispatch, dispatched bool, hist historySnapshot, now time.Time) forecast.Timing {
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
			if dt.StartedAt > 0 {
				start = time.UnixMilli(dt.StartedAt)
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
	if dispatched && dt.DispatchedAt > 0 {
		// Of the jobs like it, those that ran longer than it has so far.
		held := now.UnixNano() - dt.DispatchedAt
		if ms, ok := medianAbove(xs, held/1e6); ok {
			tm.End = time.Unix(0, dt.DispatchedAt).Add(time.Duration(ms) * time.Millisecond)
		}
	}
	return tm
}
