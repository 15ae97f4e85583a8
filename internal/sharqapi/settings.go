package sharqapi

import (
	"encoding/json"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
)

// ShareSettings are sharq's own settings of a quota share, which AWS's
// QuotaShare has no field for: PUT to ShareSettingsPath sets them, and
// the shares route shows them.
type ShareSettings struct {
	// MinimumRuntimeSeconds: a dispatched job of the share younger than
	// this is no victim of preemption (0: none).
	MinimumRuntimeSeconds int `json:"minimumRuntimeSeconds"`
}

// ShareSettingsPath is the route of a share's settings.
func ShareSettingsPath(queue, share string) string {
	return "/sharq/v1/queues/" + queue + "/shares/" + share + "/settings"
}

func (h *Handler) putShareSettings(w http.ResponseWriter, r *http.Request) {
	shareARN := h.base.QuotaShare(r.PathValue("queue"), r.PathValue("share"))
	var in ShareSettings
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a quota share's settings ({\"minimumRuntimeSeconds\": N}): "+err.Error())
		return
	}
	if !h.authorize(w, r, access.ActionUpdateQuotaShareSettings, shareARN) {
		return
	}
	s, err := h.eng.SetQuotaShareMinimumRuntime(r.Context(), shareARN, in.MinimumRuntimeSeconds)
	if err != nil {
		h.engineError(w, err)
		return
	}
	writeJSON(w, ShareSettings{MinimumRuntimeSeconds: s.MinimumRuntimeSeconds})
}
