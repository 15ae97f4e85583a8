package sharqapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

// KeysPath lists access keys (GET) and creates one (POST CreateKeyRequest,
// answered with the only copy of its secret); POST KeysPath/{id}/disable
// and /enable and DELETE KeysPath/{id} change one.
const KeysPath = "/sharq/v1/access/keys"

// CreateKeyRequest asks for a new access key.
type CreateKeyRequest struct {
	Name     string   `json:"name"`
	Policies []string `json:"policies"`
}

// AccessKey is an access key as listed; SecretAccessKey is set only in
// the answer to its creation.
type AccessKey struct {
	Name            string    `json:"name"`
	AccessKeyID     string    `json:"accessKeyId"`
	SecretAccessKey string    `json:"secretAccessKey,omitempty"`
	Policies        []string  `json:"policies"`
	Status          string    `json:"status"` // Active or Inactive, as IAM's
	CreatedAt       time.Time `json:"createdAt"`
}

func (h *Handler) userARN(name string) string { return access.UserARN(h.opts.AccountID, name) }

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) {
	var req CreateKeyRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a key request: "+err.Error())
		return
	}
	if !h.authorize(w, r, access.ActionCreateAccessKey, h.userARN(req.Name)) {
		return
	}
	k, err := h.opts.Keyring.Create(r.Context(), req.Name, req.Policies)
	switch {
	case errors.Is(err, access.ErrExists):
		writeError(w, http.StatusConflict, "an access key named "+req.Name+" exists")
		return
	case errors.Is(err, access.ErrInvalidKeyName), errors.Is(err, access.ErrUnknownPolicy):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		h.engineError(w, err)
		return
	}
	writeJSON(w, AccessKey{Name: k.Name, AccessKeyID: k.ID, SecretAccessKey: k.Secret, Policies: nonNil(k.Policies),
		Status: "Active", CreatedAt: k.CreatedAt})
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionListAccessKeys, access.AnyResource) {
		return
	}
	ks, err := h.opts.Keyring.Store().Keys(r.Context())
	if err != nil {
		h.engineError(w, err)
		return
	}
	out := []AccessKey{}
	for _, k := range ks {
		out = append(out, listedKey(k))
	}
	writeJSON(w, out)
}

func listedKey(k access.StoredKey) AccessKey {
	status := "Active"
	if k.Disabled {
		status = "Inactive"
	}
	return AccessKey{Name: k.Name, AccessKeyID: k.ID, Policies: nonNil(k.Policies), Status: status, CreatedAt: k.CreatedAt}
}

// changeKey disables, enables or deletes the key of the path's {id}.
func (h *Handler) changeKey(action string, change func(r *http.Request, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		k, err := h.opts.Keyring.Store().Key(r.Context(), id)
		resource := h.userARN("*") // a key that does not exist has no user
		if err == nil {
			resource = h.userARN(k.Name)
		}
		if !h.authorize(w, r, action, resource) {
			return
		}
		if err == nil {
			err = change(r, id)
		}
		switch {
		case errors.Is(err, access.ErrNotFound):
			writeError(w, http.StatusNotFound, "no access key "+id)
		case err != nil:
			h.engineError(w, err)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

func (h *Handler) mountKeys(mux Mux) {
	keys := h.opts.Keyring.Store()
	mux.HandleFunc("GET "+KeysPath, h.listKeys)
	mux.HandleFunc("POST "+KeysPath, h.createKey)
	mux.HandleFunc("POST "+KeysPath+"/{id}/disable", h.changeKey(access.ActionUpdateAccessKey, func(r *http.Request, id string) error {
		return keys.SetKeyDisabled(r.Context(), id, true)
	}))
	mux.HandleFunc("POST "+KeysPath+"/{id}/enable", h.changeKey(access.ActionUpdateAccessKey, func(r *http.Request, id string) error {
		return keys.SetKeyDisabled(r.Context(), id, false)
	}))
	mux.HandleFunc("DELETE "+KeysPath+"/{id}", h.changeKey(access.ActionDeleteAccessKey, func(r *http.Request, id string) error {
		return keys.DeleteKey(r.Context(), id)
	}))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
