package sharqapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
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
	h.addHoldings(out.Jobs)
	writeJSON(w, out)
}

// addHoldings says whose capacity each running job of a quota share holds.
func (h *Handler) addHoldings(ps []Position) {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.JobID)
	}
	hs := h.eng.HoldingsOf(ids)
	for i, p := range ps {
		if hd, ok := hs[p.JobID]; ok && p.Share != "" && slices.Contains(runningStatuses, p.Status) {
			ps[i].Holding = HoldingOf(hd)
		}
	}
}

// runningStatuses are those of a job that holds capacity.
var runningStatuses = []string{engine.StatusScheduled, engine.StatusStarting, engine.StatusRunning}

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

// position reads one job's standing. The job record gives status and
// priority for every job; the scheduler's view adds the place of a live one.
func (h *Handler) position(r *http.Request, id string) (Position, error) {
	j, err := h.eng.DescribeServiceJob(r.Context(), id)
	if err != nil {
		return Position{}, err
	}
	p := Position{
		JobID: j.JobID, Queue: queueName(j.JobQueue), Share: j.QuotaShareName, Status: j.Status,
		Priority: j.SchedulingPriority, Owner: j.Owner,
	}
	if j.PreemptionSummary != nil {
		p.Preemptions = j.PreemptionSummary.PreemptedAttemptCount
	}
	if st, ok := h.eng.JobPosition(j.JobID); ok && !st.Dispatched && j.Status == engine.StatusRunnable {
		p.Place = st.Position + 1
		p.Reason = st.Reason.String()
		p.Misconfigured = st.Reason.Misconfiguration()
		p.ETA = LatestEstimate(h.eng.LatestStartEstimates(), j.JobID)
	}
	return p, nil
}

// HoldingOf is a job's holding on the wire.
func HoldingOf(hd core.Holding) *Holding {
	out := &Holding{Own: []Instances{}, Borrowed: []Loan{}}
	for _, o := range hd.Own {
		out.Own = append(out.Own, Instances{Unit: o.Unit, Count: o.Count})
	}
	for _, l := range hd.Loans {
		out.Borrowed = append(out.Borrowed, Loan{Unit: l.Unit, Count: l.Count, Lender: l.Lender, Reclaimable: l.Reclaimable})
	}
	return out
}

// queueName takes the name out of a job queue ARN (…:job-queue/NAME).
func queueName(arn string) string {
	if i := strings.LastIndex(arn, "job-queue/"); i >= 0 {
		return arn[i+len("job-queue/"):]
	}
	return arn
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
