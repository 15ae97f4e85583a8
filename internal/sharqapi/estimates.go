package sharqapi

import (
	"net/http"
	"strconv"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/readmodel"
)

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
	writeJSON(w, readmodel.EstimatesOf(h.eng.LatestStartEstimates(), since))
}
