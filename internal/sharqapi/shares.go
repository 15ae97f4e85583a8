package sharqapi

import (
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/readmodel"
)

func (h *Handler) shares(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionGetShareUsage, access.AnyResource) {
		return
	}
	u, err := readmodel.UsageOf(r.Context(), h.eng)
	if err != nil {
		h.engineError(w, err)
		return
	}
	writeJSON(w, u)
}
