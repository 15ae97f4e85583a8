package sharqapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
)

// AccessPolicy is a stored access policy, as PoliciesPath lists them.
type AccessPolicy struct {
	Name     string                `json:"name"`
	Document access.PolicyDocument `json:"document"`
}

// PoliciesPath lists the access policies (GET); PUT PoliciesPath/{name}
// with a PolicyDocument creates or replaces one.
const PoliciesPath = "/sharq/v1/access/policies"

// PolicyARN is the resource of a policy's routes.
func (h *Handler) policyARN(name string) string {
	return "arn:aws:iam::" + h.opts.AccountID + ":policy/" + name
}

func (h *Handler) putPolicy(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var doc access.PolicyDocument
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a policy document: "+err.Error())
		return
	}
	if err := doc.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, "policy "+name+": "+err.Error())
		return
	}
	if access.IsBuiltinPolicy(name) {
		writeError(w, http.StatusBadRequest, "policy "+name+" is built in and cannot be changed")
		return
	}
	if !h.authorize(w, r, access.ActionPutAccessPolicy, h.policyARN(name)) {
		return
	}
	b, _ := json.Marshal(doc)
	if err := h.opts.Keys.PutPolicy(r.Context(), access.Policy{Name: name, Document: b}); err != nil {
		h.engineError(w, err)
		return
	}
	writeJSON(w, AccessPolicy{Name: name, Document: doc})
}

func (h *Handler) listPolicies(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionListAccessPolicies, access.AnyResource) {
		return
	}
	ps, err := h.opts.Keys.Policies(r.Context())
	if err != nil {
		h.engineError(w, err)
		return
	}
	out := []AccessPolicy{}
	for _, p := range ps {
		doc, err := access.ParsePolicy(p.Document)
		if err != nil {
			h.engineError(w, errors.Join(errors.New("stored policy "+p.Name), err))
			return
		}
		out = append(out, AccessPolicy{Name: p.Name, Document: doc})
	}
	writeJSON(w, out)
}
