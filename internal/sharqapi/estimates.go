package sharqapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/forecast"
)

// StartEstimateOf is the wire shape of an estimate made at at.
func StartEstimateOf(e forecast.Estimate, at time.Time) *StartEstimate {
	out := &StartEstimate{Kind: e.Kind.String(), EstimatedAt: at.UnixMilli()}
	if e.Kind == forecast.Start || e.Kind == forecast.NotWithin {
		out.At = e.At
	}
	if e.Kind == forecast.Start {
		out.Basis = e.Basis.Codes()
	}
	return out
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

func (h *Handler) estimates(w http.ResponseWriter, r *http.Request) {
	var since int64
	if s := r.URL.Query().Get("since"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "since must be a time in epoch milliseconds, not "+strconv.Quote(s))
			return
		}
		since = n
	}
	if !h.authorize(w, r, access.ActionGetStartEstimates, access.AnyResource) {
		return
	}
	res := h.eng.LatestStartEstimates()
	out := Estimates{Jobs: []JobEstimate{}}
	if res == nil {
		writeJSON(w, out)
		return
	}
	out.EstimatedAt, out.Until, out.Stop = res.Now.UnixMilli(), res.Until.UnixMilli(), res.Stop.Code()
	if since > 0 && out.EstimatedAt <= since {
		out.Unchanged = true
		writeJSON(w, out)
		return
	}
	out.Jobs = make([]JobEstimate, 0, len(res.Estimates))
	for id, e := range res.Estimates {
		out.Jobs = append(out.Jobs, JobEstimate{JobID: id, StartEstimate: *StartEstimateOf(e, res.Now)})
	}
	slices.SortFunc(out.Jobs, func(a, b JobEstimate) int { return cmp.Compare(a.JobID, b.JobID) })
	writeJSON(w, out)
}
