package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

var (
	one = []record.UnitCount{{Unit: "ml.g5.xlarge", Count: 1}}
	two = []record.UnitCount{{Unit: "ml.g5.xlarge", Count: 2}}
)

func newHistory() *runHistory {
	return &runHistory{byShare: map[string]*runTimes{}, byShape: map[string]*runTimes{}}
}

// TestHistorySamples: a job's run times are its shape's once there are
// minShapeSamples of them, else its share's; each keeps the last
// runSamples, sorted; a run time that is not positive is left out.
func TestHistorySamples(t *testing.T) {
	h := newHistory()
	h.add("q", "s", one, 3*time.Second)
	h.add("q", "s", one, time.Second)
	h.add("q", "s", two, 2*time.Second)
	h.add("q", "s", two, 0)
	h.add("q", "t", one, time.Hour)
	s := h.snapshot()
	if diff := cmp.Diff([]int64{1000, 2000, 3000}, s.samples("q", "s", one)); diff != "" {
		t.Errorf("two of the shape: the share's (-want +got):\n%s", diff)
	}
	h.add("q", "s", one, 5*time.Second)
	if diff := cmp.Diff([]int64{1000, 3000, 5000}, h.snapshot().samples("q", "s", one)); diff != "" {
		t.Errorf("three of the shape: the shape's (-want +got):\n%s", diff)
	}
	if got := s.samples("q", "u", one); got != nil {
		t.Errorf("a share without run times has %v", got)
	}

	for i := range runSamples + 10 {
		h.add("q", "r", one, time.Duration(i+1)*time.Millisecond)
	}
	xs := h.snapshot().samples("q", "r", one)
	if len(xs) != runSamples || xs[0] != 11 || xs[len(xs)-1] != runSamples+10 {
		t.Errorf("the last %d run times kept, shortest first; got %v", runSamples, xs)
	}
}

// TestHistoryForgetsShapes: past maxShapes shapes the history forgets
// them and learns again; the shares' run times stay.
func TestHistoryForgetsShapes(t *testing.T) {
	h := newHistory()
	for i := range maxShapes + 1 {
		h.add("q", "s", []record.UnitCount{{Unit: "u", Count: i + 1}}, time.Second)
	}
	if n := len(h.byShape); n != 1 {
		t.Errorf("%d shapes kept past the bound, want 1", n)
	}
	if r := h.byShare[shareKey("q", "s")]; r.n != runSamples {
		t.Errorf("the share holds %d run times, want %d", r.n, runSamples)
	}
}

func TestMedianAbove(t *testing.T) {
	xs := []int64{10, 20, 30, 40, 50}
	for ms, want := range map[int64]int64{0: 30, 9: 30, 10: 40, 29: 40, 30: 50, 49: 50} {
		if got, ok := medianAbove(xs, ms); !ok || got != want {
			t.Errorf("medianAbove(%d) = %d, %v; want %d", ms, got, ok, want)
		}
	}
	if _, ok := medianAbove(xs, 50); ok {
		t.Error("a job that ran longer than every sample has a median above")
	}
}

func TestMaxRuntimeOf(t *testing.T) {
	for payload, want := range map[string]int64{
		`{"TrainingJobName":"t"}`:                                    0,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":600}}`:          600,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":0}}`:            0,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":-5}}`:           0,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":999999999999}}`: 0,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":"600"}}`:        0,
		`not json MaxRuntimeInSeconds`:                               0,
	} {
		if got := maxRuntimeOf(payload); got != want {
			t.Errorf("maxRuntimeOf(%s) = %d, want %d", payload, got, want)
		}
	}
}

// TestTimingOf: the declared bound counts from RUNNING (from now for a job
// not running yet); the history's median stands for a job without one,
// and for a running job, the median of those that ran longer than it has.
func TestTimingOf(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	h := newHistory()
	for _, m := range []time.Duration{10, 20, 30, 40, 50} {
		h.add("q", "s", one, m*time.Minute)
	}
	hist := h.snapshot()
	started := now.Add(-time.Minute)
	running := Dispatch{DispatchedAt: now.Add(-25 * time.Minute).UnixNano(), StartedAt: started.UnixMilli()}
	scheduled := Dispatch{DispatchedAt: now.Add(-time.Second).UnixNano()}
	tests := map[string]struct {
		f          jobFacts
		dt         Dispatch
		dispatched bool
		want       forecast.Timing
	}{
		"max runtime, waiting": {f: jobFacts{maxRuntime: 600}, want: forecast.Timing{Runtime: 10 * time.Minute, Basis: forecast.MaxRuntime}},
		"time limit shorter": {f: jobFacts{maxRuntime: 600, timeout: 60},
			want: forecast.Timing{Runtime: time.Minute, Basis: forecast.TimeLimit}},
		"max runtime shorter": {f: jobFacts{maxRuntime: 60, timeout: 600},
			want: forecast.Timing{Runtime: time.Minute, Basis: forecast.MaxRuntime}},
		"bound, running": {f: jobFacts{maxRuntime: 600}, dt: running, dispatched: true,
			want: forecast.Timing{End: started.Add(10 * time.Minute), Runtime: 10 * time.Minute, Basis: forecast.MaxRuntime}},
		"bound, not running yet": {f: jobFacts{timeout: 600}, dt: scheduled, dispatched: true,
			want: forecast.Timing{End: now.Add(10 * time.Minute), Runtime: 10 * time.Minute, Basis: forecast.TimeLimit}},
		"history, waiting": {f: jobFacts{queue: "q", share: "s", demand: one},
			want: forecast.Timing{Runtime: 30 * time.Minute, Basis: forecast.History}},
		"history, running 25 minutes": {f: jobFacts{queue: "q", share: "s", demand: one}, dt: running, dispatched: true,
			want: forecast.Timing{End: now.Add(15 * time.Minute), Runtime: 30 * time.Minute, Basis: forecast.History}},
		"history, running longer than all": {f: jobFacts{queue: "q", share: "s", demand: one}, dispatched: true,
			dt:   Dispatch{DispatchedAt: now.Add(-time.Hour).UnixNano()},
			want: forecast.Timing{Runtime: 30 * time.Minute, Basis: forecast.History}},
		"nothing known": {f: jobFacts{queue: "q", share: "other", demand: one}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := timingOf(&tt.f, tt.dt, tt.dispatched, hist, now)
			if !got.End.Equal(tt.want.End) || got.Runtime != tt.want.Runtime || got.Basis != tt.want.Basis {
				t.Errorf("timingOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
