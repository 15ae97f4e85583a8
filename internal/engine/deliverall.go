package engine

import (
	"context"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// DeliverAll applies several executor updates in one cycle, as Run does
// with updates that arrive together. It is for engines with
// Options.Synchronous: the simulator delivers everything that happens at
// one virtual instant at once (spec 2.3).
func (e *Engine) DeliverAll(ctx context.Context, us []executor.Update) error {
	ops := make([]*op, len(us))
	for i, u := range us {
		ops[i] = &op{fn: func(now time.Time) error { e.handleUpdate(u, now); return nil }}
	}
	return e.cycle(ctx, ops)
}
