package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/usage"
)

// eventLog is an Observer that keeps the events it hears.
type eventLog struct{ events []jobevents.Event }

func (l *eventLog) ObserveCycle(_ time.Duration, evs []jobevents.Event, _ []jobevents.Dispatch, _ []jobevents.Preempt) {
	l.events = append(l.events, evs...)
}

// transitionLog is a Sink that keeps the transitions it hears.
type transitionLog struct{ ts []jobevents.Transition }

func (l *transitionLog) Transitions(ts []jobevents.Transition, _ []jobevents.Dispatch, _ []jobevents.Preempt) {
	l.ts = append(l.ts, ts...) // copied: ts is reused by the next cycle
}

func (l *transitionLog) Usage([]usage.Segment, []string) {}

// playEvents runs, on a driven engine, a life with every kind of
// transition: dispatches, a cross-share preemption, a termination, a
// success.
func playEvents(t *testing.T, opts engine.Options) *harness {
	t.Helper()
	n := 0
	opts.NewID = func() string { n++; return fmt.Sprintf("job-%d", n) }
	h, _, clock := syncEngine(t, opts)
	ctx := context.Background()
	high := h.submit("high", "QS1", 3)
	h.submit("med", "QS1", 2)
	low := h.submit("low", "QS1", 1)
	clock.Add(time.Second)
	h.submit("qs2", "QS2", 1)
	clock.Add(time.Second)
	if err := h.e.TerminateServiceJob(ctx, low, "not needed"); err != nil {
		t.Fatal(err)
	}
	j, err := h.e.DescribeServiceJob(ctx, high)
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Second)
	for _, st := range []executor.State{executor.Starting, executor.Running, executor.Succeeded} {
		if err := h.e.Deliver(ctx, executor.Update{AttemptID: j.AttemptID, JobID: high, State: st}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// Ensure a driven engine with a sink hands it the same transitions that an
// engine with events announces, and builds no events; and that without a
// sink, every observer and the recent events get the events.
func TestTransitionsWithoutEvents(t *testing.T) {
	full, full2 := &eventLog{}, &eventLog{}
	h := playEvents(t, engine.Options{Observers: []jobevents.Observer{full, full2}})
	want := make([]jobevents.Transition, len(full.events))
	for k := range full.events {
		want[k] = full.events[k].Transition()
	}
	statuses := map[string]bool{}
	for _, tr := range want {
		statuses[tr.Status] = true
		if tr.Terminated && tr.Status != engine.StatusFailed {
			t.Errorf("terminated in %s: %+v", tr.Status, tr)
		}
	}
	for _, s := range []string{"RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"} {
		if !statuses[s] {
			t.Errorf("no transition to %s in %+v", s, want)
		}
	}
	if len(full2.events) != len(full.events) {
		t.Errorf("a second observer heard %d events, want %d", len(full2.events), len(full.events))
	}
	if got := h.e.RecentEvents(); len(got) != len(full.events) {
		t.Errorf("%d recent events, want %d", len(got), len(full.events))
	}

	sink, plain := &transitionLog{}, &eventLog{}
	h = playEvents(t, engine.Options{Driver: &engine.Driver{Sink: sink}, Observers: []jobevents.Observer{plain}})
	if !slices.Equal(sink.ts, want) {
		t.Errorf("with a sink, heard\n%+v\nwant %+v", sink.ts, want)
	}
	if got := h.e.RecentEvents(); len(got) != 0 {
		t.Errorf("with a sink, %d recent events", len(got))
	}
	if len(plain.events) != 0 {
		t.Errorf("with a sink, an observer heard %d events", len(plain.events))
	}
}
