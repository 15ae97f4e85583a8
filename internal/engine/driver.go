package engine

import (
	"context"

	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/usage"
)

// Driver is the seam of a caller that drives the engine itself instead of
// Run: the simulator on its virtual clock, and tests and tools that want a
// call's cycle committed when the call returns. A driven engine runs every
// cycle in the caller's goroutine: each call runs its own; ApplyInstant
// runs one for everything due at one instant, Deliver one for an executor
// update, Tick one for housekeeping; the internal changes posted meanwhile
// (a start that failed) come first in the next. Executor calls are made
// inline, once. Callers must not call concurrently.
type Driver struct {
	// Clock is the engine's time (default: Options.Clock).
	Clock Clock
	// Sink, when not nil, takes what each cycle did instead of the job
	// records and events: the engine keeps no job in the store (it lists
	// none and cannot be restarted), builds no events (subscribers and
	// observers get none) and keeps no describes. The simulator never reads
	// a job back, and is spared a copy of every changed job per cycle.
	Sink Sink
}

// Sink takes what each committed cycle of a driven engine did. The slices
// are the engine's, valid only during the call: a sink copies what it
// keeps.
type Sink interface {
	// Transitions hears the cycle's jobs' entries into a status, its
	// dispatches and its preemptions. The k-th dispatch is the job of the
	// k-th transition to SCHEDULED.
	Transitions(ts []jobevents.Transition, dispatches []jobevents.Dispatch, preempts []jobevents.Preempt)
	// Usage hears the usage segments the cycle wrote (closed ones and
	// those it opened; a later one of the same Attempt and Seq replaces an
	// earlier one) and the attempts whose every segment is now marked
	// preempted, as the store writes them.
	Usage(segs []usage.Segment, preempted []string)
}

// drive runs a driven engine's cycle over a batch, after the internal
// changes posted since its last cycle.
func (e *Engine) drive(ctx context.Context, batch []*op) error {
	e.postedMu.Lock()
	if len(e.posted) > 0 {
		batch = append(e.posted, batch...) // what was posted meanwhile comes first
		e.posted = nil
	}
	e.postedMu.Unlock()
	return e.cycle(ctx, batch)
}
