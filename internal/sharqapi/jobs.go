package sharqapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/readmodel"
)

func (h *Handler) positions(w http.ResponseWriter, r *http.Request) {
	var req PositionsRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a positions request: "+err.Error())
		return
	}
	if len(req.JobIDs) > MaxPositions {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("at most %d jobs per request, not %d", MaxPositions, len(req.JobIDs)))
		return
	}
	if !h.authorize(w, r, access.ActionGetJobPositions, access.AnyResource) {
		return
	}
	out := Positions{Jobs: []Position{}, Unknown: []string{}}
	for _, id := range req.JobIDs {
		p, err := h.position(r, id)
		switch {
		case engine.ErrorCode(err) == engine.NotFound:
			out.Unknown = append(out.Unknown, id)
		case err != nil:
			h.engineError(w, err)
			return
		default:
			out.Jobs = append(out.Jobs, p)
		}
	}
	readmodel.AddHoldings(h.eng, out.Jobs)
	writeJSON(w, out)
}

// match finds the jobs a part of an ID names: the short IDs tables print
// are the IDs' last 8 characters.
func (h *Handler) match(w http.ResponseWriter, r *http.Request) {
	part := r.URL.Query().Get("id")
	if len(part) < engine.MinIDFragment {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("id must be at least %d characters of a job ID", engine.MinIDFragment))
		return
	}
	if !h.authorize(w, r, access.ActionGetJobMatches, access.AnyResource) {
		return
	}
	writeJSON(w, Matches{JobIDs: append([]string{}, h.eng.MatchJobIDs(part, MaxMatches)...)})
}

// position reads one job's standing.
func (h *Handler) position(r *http.Request, id string) (Position, error) {
	j, err := h.eng.DescribeServiceJob(r.Context(), id)
	if err != nil {
		return Position{}, err
	}
	return readmodel.PositionOf(h.eng, j), nil
}

func (h *Handler) jobEvents(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionGetJobEvents, h.jobARN(r)) {
		return
	}
	evs, err := h.eng.JobEvents(r.PathValue("job"))
	if err != nil {
		h.engineError(w, err)
		return
	}
	writeJSON(w, JobEvents{Events: batchapi.EventsOf(evs, h.base)})
}
