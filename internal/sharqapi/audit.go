package sharqapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

// AuditPath streams the audit log as JSON lines of access.AuditEntry:
// those after ?after=SEQ (default all), then with ?follow=true each new
// one, until the client leaves or the server shuts down.
const AuditPath = "/sharq/v1/audit"

// auditPoll is how often a follower looks for new entries: they are
// written in batches at most access.FlushEvery apart.
const auditPoll = 250 * time.Millisecond

func (h *Handler) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if q.Get("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		writeError(w, http.StatusBadRequest, "after must be an entry's seq (a whole number), not "+strconv.Quote(q.Get("after")))
		return
	}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	if !h.authorize(w, r, access.ActionReadAuditLog, access.AnyResource) {
		return
	}
	first, err := h.opts.Audit.Audit(r.Context(), after, 1000)
	if err != nil {
		h.engineError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	for entries := first; ; {
		for _, e := range entries {
			enc.Encode(e)
			after = e.Seq
		}
		if flusher != nil {
			flusher.Flush()
		}
		if len(entries) < 1000 && !follow {
			return
		}
		if len(entries) < 1000 {
			select {
			case <-r.Context().Done():
				return
			case <-h.closing:
				return
			case <-time.After(auditPoll):
			}
		}
		if entries, err = h.opts.Audit.Audit(r.Context(), after, 1000); err != nil {
			h.opts.Logger.Error("read audit log", "err", err)
			return
		}
	}
}
