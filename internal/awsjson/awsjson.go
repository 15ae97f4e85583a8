// Package awsjson speaks AWS's awsJson1_1 protocol, which SageMaker and
// CloudWatch Logs use: every operation is a POST to / whose X-Amz-Target
// header names it (SageMaker.DescribeTrainingJob), with a JSON body both
// ways, timestamps as epoch seconds, and errors as {"__type", "message"}
// with the code in X-Amzn-ErrorType too. It sits on the shell side.
package awsjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sharq-dev/sharq/internal/access"
)

// ContentType is the protocol's media type.
const ContentType = "application/x-amz-json-1.1"

// maxBody caps a request's body.
const maxBody = 1 << 20

// Target splits r's X-Amz-Target into its service prefix and operation:
// "SageMaker", "DescribeTrainingJob".
func Target(r *http.Request) (prefix, op string) {
	prefix, op, _ = strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	return prefix, op
}

// Error is an answer in AWS's error shape.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Validation is AWS's ValidationException (400).
func Validation(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

// UnknownOperation answers an operation the service does not serve.
func UnknownOperation(target string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "UnknownOperationException",
		Message: "Operation " + target + " is not supported by this server."}
}

// Decode reads r's JSON body into v; an empty body is {}. A body that is
// not JSON is an *Error with code invalid.
func Decode(r *http.Request, v any, invalid string) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(b) > maxBody {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: invalid, Message: "request body too large"}
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: invalid, Message: "Malformed request body: " + err.Error()}
	}
	return nil
}

// Write answers v as JSON.
func Write(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(w, nil, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if len(h["x-amzn-RequestId"]) == 0 {
		h["x-amzn-RequestId"] = []string{uuid.NewString()}
	}
	w.Write(b)
}

// WriteError answers err in AWS's shape: an *Error as it says, an
// authorizer's refusal as AccessDeniedException, an authentication
// failure with its code, anything else as InternalFailure (logged in full,
// shown as "internal error").
func WriteError(w http.ResponseWriter, log *slog.Logger, err error) {
	e := asError(err)
	if e.Code == "InternalFailure" && log != nil {
		log.Error("request failed", "err", err)
	}
	h := w.Header()
	h.Set("X-Amzn-ErrorType", e.Code) // canonical, so the audit log's Get finds it
	if len(h["x-amzn-RequestId"]) == 0 {
		h["x-amzn-RequestId"] = []string{uuid.NewString()}
	}
	h.Set("Content-Type", ContentType)
	b, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{e.Code, e.Message})
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	w.Write(b)
}

func asError(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if d, ok := errors.AsType[*access.DeniedError](err); ok {
		return &Error{Status: http.StatusForbidden, Code: "AccessDeniedException", Message: d.Error()}
	}
	if a, ok := errors.AsType[*access.AuthError](err); ok {
		return &Error{Status: cmpStatus(a.Status), Code: a.Code, Message: a.Message}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: "internal error"}
}

func cmpStatus(s int) int {
	if s == 0 {
		return http.StatusForbidden
	}
	return s
}

// Seconds is a time as the protocol writes timestamps: epoch seconds,
// with milliseconds as the fraction.
func Seconds(ms int64) float64 { return float64(ms) / 1000 }

// Time reads a timestamp the protocol sent (epoch seconds); zero for none.
func Time(secs *float64) time.Time {
	if secs == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(*secs * 1000))
}
