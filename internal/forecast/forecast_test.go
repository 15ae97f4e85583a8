package forecast_test

import (
	stdcmp "cmp"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/forecast"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const unit = "ml.g5.xlarge"

// world is a core whose state the engine would hold at now: running jobs
// restored, waiting jobs submitted, one cycle run just before now.
type world struct {
	t      *testing.T
	c      *core.Core
	timing map[string]forecast.Timing
	queued int64
}

func newWorld(t *testing.T, instances int, shares ...core.PutShare) *world {
	w := &world{t: t, c: core.New(), timing: map[string]forecast.Timing{}}
	w.must(core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: unit, Count: instances}}})
	w.must(core.PutQueue{Name: "q", Env: "se", QuotaShares: true})
	for _, s := range shares {
		s.Queue = "q"
		w.must(s)
	}
	return w
}

func share(name string, limit int, st core.Strategy, inShare bool) core.PutShare {
	return core.PutShare{Name: name, Limits: []core.UnitCount{{Unit: unit, Count: limit}}, Strategy: st, BorrowLimit: core.UnlimitedBorrow, InSharePreemption: inShare}
}

func withMin(s core.PutShare, d time.Duration) core.PutShare {
	s.MinRuntime = d
	return s
}

func (w *world) must(ev core.Event) {
	w.t.Helper()
	if err := w.c.Apply(ev); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) submit(id, share string, n, prio int) core.Submit {
	w.queued++
	return core.Submit{Job: id, Queue: "q", Share: share, Demand: []core.UnitCount{{Unit: unit, Count: n}}, Priority: prio,
		QueuedAt: now.Add(-time.Hour).UnixNano() + w.queued, PreemptionRetries: -1}
}

// running restores a dispatched job that ends after end (0: unknown) and
// runs for runtime when it is dispatched again.
func (w *world) running(id, share string, n, prio int, end, runtime time.Duration, b forecast.Basis) {
	w.must(core.Restore{Submit: w.submit(id, share, n, prio), DispatchedAt: now.Add(-time.Minute).UnixNano() + w.queued})
	tm := forecast.Timing{Runtime: runtime, Basis: b}
	if end != 0 {
		tm.End = now.Add(end)
	}
	w.timing[id] = tm
}

func (w *world) waiting(id, share string, n, prio int, runtime time.Duration, b forecast.Basis) {
	w.must(w.submit(id, share, n, prio))
	w.timing[id] = forecast.Timing{Runtime: runtime, Basis: b}
}

// run settles the state as the engine's last cycle would, then runs the
// forecast and renders each estimate.
func (w *world) run(horizon time.Duration, maxDecisions int) (map[string]string, *forecast.Result) {
	w.t.Helper()
	w.c.Step(now.Add(-time.Millisecond))
	timing := func(id string) forecast.Timing { return w.timing[id] }
	res, err := forecast.Run(w.c, forecast.Input{Now: now, Horizon: horizon, MaxDecisions: maxDecisions, Timing: timing})
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]string{}
	for id, e := range res.Estimates {
		out[id] = render(e)
	}
	return out, res
}

func render(e forecast.Estimate) string {
	at := time.UnixMilli(e.At).Sub(now)
	switch e.Kind {
	case forecast.Start:
		if e.Basis == 0 {
			return fmt.Sprintf("start +%v", at)
		}
		return fmt.Sprintf("start +%v (%s)", at, e.Basis)
	case forecast.NotWithin:
		return fmt.Sprintf("not within +%v", at)
	}
	return e.Kind.String()
}

const (
	min10 = 10 * time.Minute
	day   = 24 * time.Hour
)

func TestRun(t *testing.T) {
	tests := map[string]struct {
		build        func(w *world)
		instances    int
		shares       []core.PutShare
		horizon      time.Duration
		maxDecisions int
		want         map[string]string
		stop         forecast.Stop
	}{
		// Ensure a job waiting for the only instance starts when the
		// running job's max runtime is up.
		"MaxRuntime": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, 600*time.Second, 0, forecast.MaxRuntime)
				w.waiting("a", "QS1", 1, 0, 0, 0)
			},
			want: map[string]string{"a": "start +10m0s (max runtime)"},
			stop: forecast.AllStarted,
		},
		// Ensure jobs queue one behind the other, each estimate resting on
		// the ends before it.
		"Chain": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, min10, 0, forecast.TimeLimit)
				w.waiting("a", "QS1", 1, 0, 5*time.Minute, forecast.History)
				w.waiting("b", "QS1", 1, 0, time.Minute, forecast.MaxRuntime)
				w.waiting("c", "QS1", 1, 0, time.Minute, forecast.MaxRuntime)
			},
			want: map[string]string{"a": "start +10m0s (time limit)", "b": "start +15m0s (time limit + run time history)",
				"c": "start +16m0s (max runtime + time limit + run time history)"},
			stop: forecast.AllStarted,
		},
		// Ensure a job behind a running job of unknown end gets no guess.
		"UnknownEnd": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, 0, 0, 0)
				w.waiting("a", "QS1", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"a": "NO_BASIS"},
			stop: forecast.NoMoreEnds,
		},
		// Ensure a job is estimated when it starts, even if its own run time
		// is unknown; the job behind it then gets no guess.
		"UnknownRuntime": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, min10, 0, forecast.MaxRuntime)
				w.waiting("a", "QS1", 1, 0, 0, 0)
				w.waiting("b", "QS1", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"a": "start +10m0s (max runtime)", "b": "NO_BASIS"},
			stop: forecast.NoMoreEnds,
		},
		// Ensure jobs not reached before the horizon say so.
		"Horizon": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, 20*time.Hour, 0, forecast.MaxRuntime)
				w.waiting("a", "QS1", 1, 0, 10*time.Hour, forecast.MaxRuntime)
				w.waiting("b", "QS1", 1, 0, 10*time.Hour, forecast.MaxRuntime)
			},
			want: map[string]string{"a": "start +20h0m0s (max runtime)", "b": "not within +24h0m0s"},
			stop: forecast.AtHorizon,
		},
		// Ensure the work bound stops the run where it is.
		"WorkBound": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)}, maxDecisions: 3,
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, min10, 0, forecast.MaxRuntime)
				for _, id := range []string{"a", "b", "c", "d"} {
					w.waiting(id, "QS1", 1, 0, min10, forecast.MaxRuntime)
				}
			},
			want: map[string]string{"a": "start +10m0s (max runtime)", "b": "start +20m0s (max runtime)",
				"c": "not within +20m0s", "d": "not within +20m0s"},
			stop: forecast.AtBudget,
		},
		// Ensure a job that can never fit is told so, and blocks no one.
		"Never": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, min10, 0, forecast.MaxRuntime)
				w.waiting("big", "QS1", 2, 0, min10, forecast.MaxRuntime)
				w.waiting("a", "QS1", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"big": "NEVER", "a": "start +10m0s (max runtime)"},
			stop: forecast.AllStarted,
		},
		// Ensure a higher-priority job preempts in its share once enough
		// capacity frees up, and the job behind it waits for the end of
		// the preemptor.
		"InSharePreemption": {
			instances: 2, shares: []core.PutShare{share("QS1", 2, core.Lend, true)},
			build: func(w *world) {
				w.running("top", "QS1", 1, 9, min10, 0, forecast.MaxRuntime)
				w.running("low", "QS1", 1, 1, time.Hour, time.Hour, forecast.MaxRuntime)
				w.waiting("high", "QS1", 2, 5, 5*time.Minute, forecast.History)
				w.waiting("next", "QS1", 1, 1, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"high": "start +10m0s (max runtime)", "next": "start +15m0s (max runtime + run time history)"},
			stop: forecast.AllStarted,
		},
		// Ensure a share reclaims its lent instance once its own job ends,
		// and the borrower's share borrows again when that ends.
		"Reclaim": {
			instances: 3, shares: []core.PutShare{share("QS1", 1, core.LendAndBorrow, false), share("QS2", 2, core.Lend, false)},
			build: func(w *world) {
				w.running("own", "QS1", 1, 0, 30*time.Minute, 0, forecast.MaxRuntime)
				w.running("borrower", "QS1", 1, 0, time.Hour, time.Hour, forecast.MaxRuntime)
				w.running("lender", "QS2", 1, 0, min10, 0, forecast.MaxRuntime)
				w.waiting("owner", "QS2", 2, 0, min10, forecast.MaxRuntime)
				w.waiting("more", "QS1", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"owner": "start +10m0s (max runtime)", "more": "start +20m0s (max runtime)"},
			stop: forecast.AllStarted,
		},
		// Ensure a share waits for its lent instance until the borrower,
		// whose end nothing tells, reaches its share's minimum runtime
		// (dispatched a minute ago, 10 minutes): then it reclaims it.
		"MinimumRuntimeReclaim": {
			instances: 2, shares: []core.PutShare{withMin(share("QS1", 1, core.LendAndBorrow, false), min10), share("QS2", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("own", "QS1", 1, 0, time.Hour, 0, forecast.MaxRuntime)
				w.running("borrower", "QS1", 1, 0, 0, 0, 0)
				w.waiting("owner", "QS2", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"owner": "start +9m0s (minimum runtime)"},
			stop: forecast.AllStarted,
		},
		// Ensure in-share preemption waits for the victim's minimum runtime,
		// and not when an end comes first.
		"MinimumRuntimeInShare": {
			instances: 2, shares: []core.PutShare{withMin(share("QS1", 2, core.Lend, true), min10)},
			build: func(w *world) {
				w.running("low", "QS1", 1, 1, time.Hour, time.Hour, forecast.MaxRuntime)
				w.running("short", "QS1", 1, 1, 5*time.Minute, 0, forecast.MaxRuntime)
				w.waiting("high", "QS1", 1, 5, min10, forecast.MaxRuntime)
				w.waiting("higher", "QS1", 1, 7, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"higher": "start +5m0s (max runtime)", "high": "start +9m0s (max runtime + minimum runtime)"},
			stop: forecast.AllStarted,
		},
		// Ensure an end already past counts as now.
		"Overdue": {
			instances: 1, shares: []core.PutShare{share("QS1", 1, core.Lend, false)},
			build: func(w *world) {
				w.running("r", "QS1", 1, 0, -time.Minute, 0, forecast.MaxRuntime)
				w.waiting("a", "QS1", 1, 0, min10, forecast.MaxRuntime)
			},
			want: map[string]string{"a": "start +0s (max runtime)"},
			stop: forecast.AllStarted,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			horizon, maxDecisions := stdcmp.Or(tt.horizon, day), stdcmp.Or(tt.maxDecisions, 1000)
			w := newWorld(t, tt.instances, tt.shares...)
			tt.build(w)
			got, res := w.run(horizon, maxDecisions)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("estimates (-want +got):\n%s", diff)
			}
			if res.Stop != tt.stop {
				t.Errorf("stopped: %s, want %s", res.Stop, tt.stop)
			}
			// Ensure the same state gives the same result.
			w2 := newWorld(t, tt.instances, tt.shares...)
			tt.build(w2)
			if _, res2 := w2.run(horizon, maxDecisions); !reflect.DeepEqual(res, res2) {
				t.Errorf("two runs differ:\n%+v\n%+v", res, res2)
			}
		})
	}
}

// TestNext: the result holds until the first end expected after now.
func TestNext(t *testing.T) {
	w := newWorld(t, 2, share("QS1", 2, core.Lend, false))
	w.running("r1", "QS1", 1, 0, -time.Minute, 0, forecast.MaxRuntime)
	w.running("r2", "QS1", 1, 0, 7*time.Minute, 0, forecast.MaxRuntime)
	w.waiting("a", "QS1", 2, 0, min10, forecast.MaxRuntime)
	got, res := w.run(day, 1000)
	if want := now.Add(7 * time.Minute); !res.Next.Equal(want) {
		t.Errorf("next %v, want %v", res.Next, want)
	}
	if got["a"] != "start +7m0s (max runtime)" {
		t.Errorf("a: %s", got["a"])
	}
}

func TestBadInput(t *testing.T) {
	none := func(string) forecast.Timing { return forecast.Timing{} }
	for _, in := range []forecast.Input{{Now: now, MaxDecisions: 1, Timing: none}, {Now: now, Horizon: time.Hour, Timing: none},
		{Now: now, Horizon: time.Hour, MaxDecisions: 1}} {
		if _, err := forecast.Run(core.New(), in); err == nil {
			t.Errorf("%+v: no error", in)
		}
	}
}
