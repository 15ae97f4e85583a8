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
)

// eventLog is an Observer that keeps the events it hears.
type eventLog struct{ events []jobevents.Event }

func (l *eventLog) ObserveCycle(_ time.Duration, evs []jobevents.Event, _ []jobevents.Dispatch, _ []jobevents.Preempt) {
	l.events = append(l.events, evs...)
}

// transitionLog is a TransitionObserver that keeps what it hears, by the
// way it heard it.
type transitionLog struct {
	fromEvents, bare []jobevents.Transition
}

func (l *transitionLog) ObserveCycle(_ time.Duration, evs []jobevents.Event, _ []jobevents.Dispatch, _ []jobevents.Preempt) {
	for k := range evs {
		l.fromEvents = append(l.fromEvents, evs[k].Transition())
	}
}

func (l *transitionLog) ObserveTransitions(ts []jobevents.Transition, _ []jobevents.Dispatch, _ []jobevents.Preempt) {
	l.bare = append(l.bare, ts...) // copied: ts is reused by the next cycle
}

// playEvents runs, on a synchronous engine, a life with every kind of
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

// Ensure an engine with NoEvents hands its TransitionObservers the same
// transitions that an engine with events announces, and still builds
// events for an observer that needs them; and that without NoEvents, every
// observer and the recent events get the events.
func TestTransitionsWithoutEvents(t *testing.T) {
	full, fullT := &eventLog{}, &transitionLog{}
	h := playEvents(t, engine.Options{Observers: []jobevents.Observer{full, fullT}})
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
	if !slices.Equal(fullT.fromEvents, want) || fullT.bare != nil {
		t.Errorf("a TransitionObserver of an engine with events heard\nfrom events %+v\nbare %+v\nwant %+v", fullT.fromEvents, fullT.bare, want)
	}
	if got := h.e.RecentEvents(); len(got) != len(full.events) {
		t.Errorf("%d recent events, want %d", len(got), len(full.events))
	}

	bare := &transitionLog{}
	h = playEvents(t, engine.Options{Observers: []jobevents.Observer{bare}, NoEvents: true, Ephemeral: true})
	if !slices.Equal(bare.bare, want) || bare.fromEvents != nil {
		t.Errorf("with NoEvents, heard\nbare %+v\nfrom events %+v\nwant %+v", bare.bare, bare.fromEvents, want)
	}
	if got := h.e.RecentEvents(); len(got) != 0 {
		t.Errorf("with NoEvents, %d recent events", len(got))
	}

	mixed, plain := &transitionLog{}, &eventLog{}
	playEvents(t, engine.Options{Observers: []jobevents.Observer{mixed, plain}, NoEvents: true})
	if !slices.Equal(mixed.bare, want) {
		t.Errorf("with NoEvents and a plain observer, heard %+v, want %+v", mixed.bare, want)
	}
	if len(plain.events) != len(full.events) {
		t.Fatalf("a plain observer of an engine with NoEvents heard %d events, want %d", len(plain.events), len(full.events))
	}
	for k, ev := range plain.events {
		if w := full.events[k]; ev.ID != w.ID || ev.At != w.At || ev.Job.Status != w.Job.Status || len(ev.Job.Attempts) != len(w.Job.Attempts) {
			t.Errorf("event %d: %+v, want %+v", k, ev, w)
		}
	}
}
