package web

import "github.com/sharq-dev/sharq/internal/forecast"

// StartEstimate is when a waiting job is expected to start, as sharq's
// routes tell it (sharqapi.StartEstimate), without the time it was made:
// the console's state holds no clock reading.
type StartEstimate struct {
	// Kind is ESTIMATED, NOT_WITHIN, NO_BASIS or NEVER.
	Kind  string   `json:"kind"`
	At    int64    `json:"at,omitempty"`    // epoch ms: the start, or where the estimate stopped looking
	Basis []string `json:"basis,omitempty"` // MAX_RUNTIME, TIME_LIMIT, HISTORY
}

// estimateOf is a job's estimate in the engine's latest, or nil.
func (c *Console) estimateOf(jobID string) *StartEstimate {
	r := c.eng.LatestStartEstimates()
	if r == nil {
		return nil
	}
	e, ok := r.Estimates[jobID]
	if !ok {
		return nil
	}
	out := &StartEstimate{Kind: e.Kind.String()}
	if e.Kind == forecast.Start || e.Kind == forecast.NotWithin {
		out.At = e.At
	}
	if e.Kind == forecast.Start {
		out.Basis = e.Basis.Codes()
	}
	return out
}

// ObserveEstimates pushes the state again when new start estimates are
// ready (engine.EstimateObserver).
func (c *Console) ObserveEstimates() { c.poke() }
