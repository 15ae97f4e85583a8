package batchapi

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/engine"
)

// The two errors AWS Batch models for every operation, and the one AWS
// answers for every service when IAM refuses a request.
const (
	clientException       = "ClientException"
	serverException       = "ServerException"
	accessDeniedException = "AccessDeniedException"
)

// apiError is an error as the client sees it.
type apiError struct {
	status  int
	code    string
	message string
	allow   string // the Allow header of a 405
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// clientErrorf is a ClientException for a request that is wrong as sent.
// It is an engine.Invalid error, as the engine's own refusals, so that
// routes outside the API that share an operation (the console's) answer
// it as they answer those.
func clientErrorf(format string, args ...any) error {
	return &engine.Error{Code: engine.Invalid, Message: fmt.Sprintf(format, args...)}
}

// toAPIError maps an error to what the client is told: the handler's own
// errors as they are, a refusal by authentication with its code, one by
// authorization as AccessDeniedException (403) in AWS's words, the
// engine's client-facing codes as ClientException with the engine's
// message, anything else as a ServerException that hides its cause.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if de, ok := errors.AsType[*access.DeniedError](err); ok {
		return &apiError{status: http.StatusForbidden, code: accessDeniedException, message: de.Error()}
	}
	if au, ok := errors.AsType[*access.AuthError](err); ok {
		return &apiError{status: cmp.Or(au.Status, http.StatusForbidden), code: cmp.Or(au.Code, accessDeniedException), message: au.Message}
	}
	switch engine.ErrorCode(err) {
	case engine.Invalid, engine.NotFound, engine.Conflict:
		return &apiError{status: http.StatusBadRequest, code: clientException, message: engine.ErrorMessage(err)}
	}
	return &apiError{status: http.StatusInternalServerError, code: serverException, message: "internal error"}
}

// WriteError answers err in AWS's error shape, with a request ID of its
// own: an *access.AuthError with its status and code, an
// *access.DeniedError as AccessDeniedException, anything else as the
// operations' errors are. It answers the requests that authentication
// refuses, on every route (access.Middleware's fail).
func (s *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	id := uuid.NewString()
	w.Header()["x-amzn-RequestId"] = []string{id}
	status := s.writeError(w, "", id, err)
	s.log.Debug("request refused", "method", r.Method, "path", r.URL.EscapedPath(), "status", status, "request_id", id, "err", err)
}

// writeError answers err as AWS does: the code in X-Amzn-ErrorType (which
// the Go SDK and botocore read first) and in the body's __type, the text
// in the body's message. It returns the status written.
func (s *Handler) writeError(w http.ResponseWriter, op, id string, err error) int {
	ae := toAPIError(err)
	if ae.code == serverException {
		s.log.Error("request failed", "op", op, "request_id", id, "err", err)
	}
	h := w.Header()
	h["X-Amzn-ErrorType"] = []string{ae.code}
	h.Set("Content-Type", "application/json")
	if ae.allow != "" {
		h.Set("Allow", ae.allow)
	}
	body, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{ae.code, ae.message})
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(ae.status)
	w.Write(body)
	return ae.status
}

// jsonType names, for a message, the JSON type that decodes into a Go
// type of the given kind.
func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case kind == "slice", kind == "array":
		return "an array"
	}
	return "an object"
}

// article turns json.UnmarshalTypeError's Value ("string", "number 1.5")
// into words for a message.
func article(value string) string {
	switch value {
	case "object", "array":
		return "an " + value
	case "bool":
		return "a boolean"
	case "string", "number":
		return "a " + value
	}
	return strings.TrimPrefix(value, "number ")
}
