package readmodel

import (
	"cmp"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/forecast"
)

// EstimateOf is the shape of an estimate.
func EstimateOf(e forecast.Estimate) Estimate {
	out := Estimate{Kind: e.Kind.String()}
	if e.Kind == forecast.Start || e.Kind == forecast.NotWithin {
		out.At = e.At
	}
	if e.Kind == forecast.Start {
		out.Basis = e.Basis.Codes()
	}
	return out
}

// StartEstimateOf is the shape of an estimate made at at.
func StartEstimateOf(e forecast.Estimate, at time.Time) *StartEstimate {
	return &StartEstimate{Estimate: EstimateOf(e), EstimatedAt: at.UnixMilli()}
}

// LatestEstimate is a job's estimate in r (nil when r is nil or has none).
func LatestEstimate(r *forecast.Result, jobID string) *StartEstimate {
	if r == nil {
		return nil
	}
	e, ok := r.Estimates[jobID]
	if !ok {
		return nil
	}
	return StartEstimateOf(e, r.Now)
}

// EstimatesOf is every waiting job's estimate in r, by job ID. With since
// above 0 and r made no later than since, it holds no jobs and says
// Unchanged.
func EstimatesOf(r *forecast.Result, since int64) Estimates {
	out := Estimates{Jobs: []JobEstimate{}}
	if r == nil {
		return out
	}
	out.EstimatedAt, out.Until, out.Stop = r.Now.UnixMilli(), r.Until.UnixMilli(), r.Stop.Code()
	if since > 0 && out.EstimatedAt <= since {
		out.Unchanged = true
		return out
	}
	out.Jobs = make([]JobEstimate, 0, len(r.Estimates))
	for id, e := range r.Estimates {
		out.Jobs = append(out.Jobs, JobEstimate{JobID: id, StartEstimate: *StartEstimateOf(e, r.Now)})
	}
	slices.SortFunc(out.Jobs, func(a, b JobEstimate) int { return cmp.Compare(a.JobID, b.JobID) })
	return out
}
