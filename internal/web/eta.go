package web

import "github.com/sharq-dev/sharq/internal/readmodel"

// StartEstimate is when a waiting job is expected to start, as sharq's
// routes tell it, without the time it was made: the console's state holds
// no clock reading.
type StartEstimate = readmodel.Estimate

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
	out := readmodel.EstimateOf(e)
	return &out
}

// ObserveEstimates pushes the state again when new start estimates are
// ready (engine.EstimateObserver).
func (c *Console) ObserveEstimates() { c.poke() }
