// Package jsonhttp writes the JSON answers of sharq's own HTTP routes (the
// console's and the CLI's, outside the AWS API): values, errors, and engine
// errors mapped to HTTP statuses.
package jsonhttp

import (
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/engine"
)

// Error is the body of every non-2xx answer.
type Error struct {
	Message string `json:"message"`
}

// Write answers v as JSON with status 200.
func Write(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// WriteError answers an Error with the given status.
func WriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(Error{Message: msg})
}

// EngineError answers an engine error: its own message for what the client
// got wrong, an authorization's refusal (*access.DeniedError) as 403 in
// AWS's words, an authentication's (*access.AuthError) with its status,
// "internal error" (and a log line under what) for the rest.
func EngineError(w http.ResponseWriter, log *slog.Logger, what string, err error) {
	if de, ok := errors.AsType[*access.DeniedError](err); ok {
		WriteError(w, http.StatusForbidden, de.Error())
		return
	}
	if ae, ok := errors.AsType[*access.AuthError](err); ok {
		// The code, as AWS sends it, tells a client (the console) to
		// sign in.
		w.Header().Set("X-Amzn-ErrorType", ae.Code)
		WriteError(w, cmp.Or(ae.Status, http.StatusForbidden), ae.Message)
		return
	}
	switch engine.ErrorCode(err) {
	case engine.NotFound:
		WriteError(w, http.StatusNotFound, engine.ErrorMessage(err))
	case engine.Invalid, engine.Conflict:
		WriteError(w, http.StatusBadRequest, engine.ErrorMessage(err))
	default:
		log.Error(what, "err", err)
		WriteError(w, http.StatusInternalServerError, "internal error")
	}
}
