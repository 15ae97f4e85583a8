package engine

import "context"

// Engine is the single writer around the core. Create it with New, run it
// with Run; its methods are safe for concurrent use.
type Engine struct {
	opts Options
}

// New opens an engine over the store, rebuilding its state from it.
func New(ctx context.Context, opts Options) (*Engine, error) {
	opts.setDefaults()
	return &Engine{opts: opts}, nil
}

// Run schedules until ctx ends; it returns the first fatal error (a failed
// commit), after which the engine answers every call with an error.
func (e *Engine) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
