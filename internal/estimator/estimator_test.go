package estimator_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/estimator"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const unit = "ml.g5.xlarge"

// state is what an engine holds, as its estimateSource answers from it: a
// real core and what the records tell of its jobs. It counts the calls.
// A FIFO queue q draws on one instance of service environment se.
type state struct {
	t          *testing.T
	mu         sync.Mutex
	c          *core.Core
	now        time.Time
	facts      map[string]estimator.Facts
	dispatched map[string]estimator.Dispatch
	queued     int64

	copies int        // CopyLive calls
	asked  [][]string // JobFacts calls
	broken bool       // CopyLive panics, as a broken invariant would
}

func newState(t *testing.T) *state {
	s := &state{t: t, c: core.New(), now: now, facts: map[string]estimator.Facts{}, dispatched: map[string]estimator.Dispatch{}}
	s.must(core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: unit, Count: 1}}})
	s.must(core.PutQueue{Name: "q", Env: "se"})
	return s
}

func (s *state) must(ev core.Event) {
	s.t.Helper()
	if err := s.c.Apply(ev); err != nil {
		s.t.Fatal(err)
	}
}

// payload is a training job's request with MaxRuntimeInSeconds (none when
// 0).
func payload(maxRuntime int) string {
	p := `{"TrainingJobName":"t","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"VolumeSizeInGB":10}`
	if maxRuntime > 0 {
		p += fmt.Sprintf(`,"StoppingCondition":{"MaxRuntimeInSeconds":%d}`, maxRuntime)
	}
	return p + "}"
}

// submit adds a waiting job of one instance, bounded by the payload's
// max runtime and the time limit (seconds; 0: none).
func (s *state) submit(id string, maxRuntime, timeLimit int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.must(s.submitEvent(id))
	s.facts[id] = estimator.Facts{ID: id, Queue: "q", Demand: []record.UnitCount{{Unit: unit, Count: 1}}, Timeout: timeLimit, Payload: payload(maxRuntime)}
}

func (s *state) submitEvent(id string) core.Submit {
	s.queued++
	return core.Submit{Job: id, Queue: "q", Demand: []core.UnitCount{{Unit: unit, Count: 1}}, QueuedAt: now.Add(-time.Hour).UnixNano() + s.queued,
		PreemptionRetries: -1}
}

// running restores a job that started RUNNING a minute before now.
func (s *state) running(id string, maxRuntime int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	started := now.Add(-time.Minute)
	s.must(core.Restore{Submit: s.submitEvent(id), DispatchedAt: started.UnixNano()})
	s.facts[id] = estimator.Facts{ID: id, Queue: "q", Demand: []record.UnitCount{{Unit: unit, Count: 1}}, Payload: payload(maxRuntime)}
	s.dispatched[id] = estimator.Dispatch{DispatchedAt: started.UnixNano(), StartedAt: started.UnixMilli()}
}

// settle runs a cycle, as the engine's last one did before now.
func (s *state) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c.Step(s.now.Add(-time.Millisecond))
}

func (s *state) CopyLive() estimator.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.copies++
	if s.broken {
		panic("a broken invariant")
	}
	return estimator.Live{Now: s.now, Copy: s.c.Copy(), Dispatched: s.dispatched}
}

func (s *state) JobFacts(ids []string) []estimator.Facts {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, ids)
	var out []estimator.Facts
	for _, id := range ids {
		if f, ok := s.facts[id]; ok {
			out = append(out, f)
		}
	}
	return out
}

func (s *state) calls() (copies int, asked [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copies, s.asked
}

// render gives an estimate relative to now.
func render(e forecast.Estimate) string {
	if e.Kind != forecast.Start {
		return e.Kind.String()
	}
	return fmt.Sprintf("start +%v (%s)", time.UnixMilli(e.At).Sub(now), e.Basis)
}

func renderAll(r *forecast.Result) map[string]string {
	out := map[string]string{}
	for id, e := range r.Estimates {
		out[id] = render(e)
	}
	return out
}

// TestComputeTimings: each job holds its capacity for its declared bound,
// the shorter of max runtime and time limit, counted from when it started
// running; else for the median of the run times of the jobs like it; else
// the jobs behind it have no basis.
func TestComputeTimings(t *testing.T) {
	s := newState(t)
	s.running("a", 600) // ends at +9m
	s.submit("b", 300, 0)
	s.submit("c", 0, 120)
	s.submit("d", 900, 60) // the time limit is the shorter
	s.submit("e", 0, 0)
	s.submit("f", 0, 0)
	s.settle()
	x := estimator.New(s, estimator.Config{})

	res, err := x.Compute()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"b": "start +9m0s (max runtime)",
		"c": "start +14m0s (max runtime)",
		"d": "start +16m0s (max runtime + time limit)",
		"e": "start +17m0s (max runtime + time limit)",
		"f": forecast.NoBasis.String(),
	}
	if diff := cmp.Diff(want, renderAll(res)); diff != "" {
		t.Errorf("without history (-want +got):\n%s", diff)
	}
	if got := x.Kept(); got != res {
		t.Errorf("Kept gives %p, want the result computed (%p)", got, res)
	}

	// e's shape ran for 10, 20 and 30 minutes: it holds for 20.
	for _, d := range []time.Duration{30 * time.Minute, 10 * time.Minute, 20 * time.Minute} {
		x.RecordRunTime("q", "", []record.UnitCount{{Unit: unit, Count: 1}}, d)
	}
	res, err = x.Compute()
	if err != nil {
		t.Fatal(err)
	}
	want["f"] = "start +37m0s (max runtime + time limit + run time history)"
	if diff := cmp.Diff(want, renderAll(res)); diff != "" {
		t.Errorf("with history (-want +got):\n%s", diff)
	}
}

// TestFactsReadOncePerJob: what never changes of a job is asked of the
// source once, the first time a computation meets the job.
func TestFactsReadOncePerJob(t *testing.T) {
	s := newState(t)
	s.running("a", 600)
	s.submit("b", 300, 0)
	s.settle()
	x := estimator.New(s, estimator.Config{})
	for range 2 {
		if _, err := x.Compute(); err != nil {
			t.Fatal(err)
		}
	}
	s.submit("c", 0, 0)
	s.settle()
	if _, err := x.Compute(); err != nil {
		t.Fatal(err)
	}
	copies, asked := s.calls()
	if copies != 3 {
		t.Errorf("%d copies for 3 computations", copies)
	}
	if diff := cmp.Diff([][]string{{"a", "b"}, {"c"}}, asked); diff != "" {
		t.Errorf("facts asked (-want +got):\n%s", diff)
	}
}

// TestComputePanic: a panic while computing (a broken invariant) is the
// computation's error; the latest estimates stay.
func TestComputePanic(t *testing.T) {
	s := newState(t)
	s.running("a", 600)
	s.submit("b", 300, 0)
	s.settle()
	x := estimator.New(s, estimator.Config{})
	first, err := x.Compute()
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.broken = true
	s.mu.Unlock()
	res, err := x.Compute()
	if err == nil || !strings.Contains(err.Error(), "panic while estimating start times: a broken invariant") {
		t.Fatalf("Compute gave %v, %v; want the panic as an error", res, err)
	}
	if x.Kept() != first {
		t.Error("a failed computation replaced the latest estimates")
	}
}

type observer struct {
	mu sync.Mutex
	n  int
}

func (o *observer) ObserveEstimates() {
	o.mu.Lock()
	o.n++
	o.mu.Unlock()
}

func (o *observer) told() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// TestBackground: the background computes only while someone reads the
// estimates, after a cycle that changed something or once the first end
// the latest estimates expected has come, and rests between two
// computations. A read after it rested computes before it answers.
//
// It runs in a synctest bubble: "nothing was computed" is checked once
// the estimator's goroutine is idle, and time moves only when the test
// sleeps, at once.
func TestBackground(t *testing.T) {
	synctest.Test(t, testBackground)
}

func testBackground(t *testing.T) {
	s := newState(t)
	s.running("a", 600)
	s.submit("b", 300, 0)
	s.settle()
	obs := &observer{}
	x := estimator.New(s, estimator.Config{Observers: []estimator.Observer{obs}})
	stop := x.Start()
	defer stop()
	// expect checks how many computations ran once the background is idle.
	expect := func(what string, want int) {
		t.Helper()
		synctest.Wait()
		if copies, _ := s.calls(); copies != want {
			t.Fatalf("%s: %d computations, want %d", what, copies, want)
		}
		if n := obs.told(); n != want {
			t.Fatalf("%s: the observer was told %d times, want %d", what, n, want)
		}
	}

	x.NoteCycle(true, now)
	time.Sleep(time.Second)
	expect("a change nobody reads", 0)
	if r := x.Kept(); r != nil {
		t.Fatalf("estimates were made while nobody read them: %+v", r.Estimates)
	}
	r := x.Latest()
	if r == nil || render(r.Estimates["b"]) != "start +9m0s (max runtime)" {
		t.Fatalf("the first read gave %+v", r)
	}
	expect("the first read", 1)
	if !r.Next.Equal(now.Add(9 * time.Minute)) {
		t.Fatalf("the next end expected is %v, want a's at +9m", r.Next)
	}

	x.NoteCycle(true, now)
	expect("a change while read", 2)
	x.NoteCycle(true, now)
	expect("a change right after a computation", 2)
	time.Sleep(100 * time.Millisecond)
	expect("a change, after the rest", 3)

	time.Sleep(time.Second)
	x.NoteCycle(false, now.Add(9*time.Minute-time.Millisecond))
	expect("a cycle that changed nothing before the next end", 3)
	x.NoteCycle(false, now.Add(9*time.Minute))
	expect("a cycle at the next end", 4)

	time.Sleep(time.Minute)
	x.NoteCycle(true, now)
	time.Sleep(time.Second)
	expect("a change a minute after the last read", 4)
	x.Latest()
	expect("a read after the rest", 5)
	x.NoteCycle(true, now)
	expect("a change after that read", 6)
}
