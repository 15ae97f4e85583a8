package engine

import (
	"context"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Deliver applies an executor update in its own cycle. It is for engines
// with Options.Synchronous; Run reads updates from the executor itself.
func (e *Engine) Deliver(ctx context.Context, u executor.Update) error {
	return e.cycle(ctx, []*op{{fn: func(now time.Time) error { e.handleUpdate(u, now); return nil }}})
}

// Tick runs housekeeping (time limit actions, retention) in its own cycle,
// for engines with Options.Synchronous.
func (e *Engine) Tick(ctx context.Context) error {
	return e.cycle(ctx, []*op{{fn: e.housekeeping}})
}
