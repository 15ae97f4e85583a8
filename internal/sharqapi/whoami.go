package sharqapi

import (
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
)

// WhoAmIPath answers who the server takes the caller for: the principal
// that the jobs the caller submits record as their owner.
const WhoAmIPath = "/sharq/v1/whoami"

// Caller is the caller as the server authenticated it. Principal is
// empty for an anonymous caller, whose jobs record no owner.
type Caller struct {
	Principal string `json:"principal,omitempty"`
	Anonymous bool   `json:"anonymous"`
}

// whoami tells callers what their own signature proved. Like every route
// it is authorized (sharq:GetCallerIdentity), so that a policy says all a
// key may do.
func (h *Handler) whoami(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionGetCallerIdentity, access.AnyResource) {
		return
	}
	c := access.Caller(r.Context())
	out := Caller{Anonymous: c.Anonymous}
	if !c.Anonymous {
		out.Principal = c.Principal
	}
	writeJSON(w, out)
}
