package engine

import (
	"errors"
	"fmt"

	"github.com/sharq-dev/sharq/internal/batchmodel"
)

// Error codes. The API answers Invalid, NotFound and Conflict with a
// ClientException carrying Message; anything else is a ServerException.
// Those of a client error are the resource model's.
const (
	Invalid  = batchmodel.Invalid
	NotFound = batchmodel.NotFound
	Conflict = batchmodel.Conflict
	Internal = "internal"
)

// Error is a domain error whose Message is shown to the client as is.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of err, Internal when it has none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the client-facing text of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) *Error  { return errorf(Invalid, format, args...) }
func notFoundf(format string, args ...any) *Error { return errorf(NotFound, format, args...) }
func conflictf(format string, args ...any) *Error { return errorf(Conflict, format, args...) }
