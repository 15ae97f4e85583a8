package engine

import "github.com/sharq-dev/sharq/internal/core"

// FairUsages reads a fair-share queue's identifiers from the engine's core.
func FairUsages(e *Engine, queue string) []core.FairUsage {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.core.FairUsages(queue)
}
