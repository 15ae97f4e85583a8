package core

import "fmt"

// Error is an event Apply refused: Kind is ErrInvalid, ErrNotFound or
// ErrConflict, and Msg says what, without the kind, so that the engine
// can word it for a client without taking the text apart.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Msg }

// Unwrap lets errors.Is find the kind.
func (e *Error) Unwrap() error { return e.Kind }

// refused is an *Error of kind whose Msg is format filled with args.
func refused(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
