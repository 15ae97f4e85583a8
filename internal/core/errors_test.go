package core_test

import (
	"errors"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
)

// Ensure a refused event is an *Error whose Kind errors.Is finds and whose
// Msg is the text without the kind, as the engine words it for clients.
func TestRefusalIsTyped(t *testing.T) {
	c := core.New()
	for _, tt := range []struct {
		ev   core.Event
		kind error
		msg  string
	}{
		{core.DeleteEnv{Name: "se"}, core.ErrNotFound, "service environment se"},
		{core.DeleteQueue{Name: "HQ"}, core.ErrNotFound, "job queue HQ"},
		{core.Terminate{Job: "j1"}, core.ErrNotFound, "job j1"},
	} {
		err := c.Apply(tt.ev)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != tt.kind || ce.Msg != tt.msg || !errors.Is(err, tt.kind) {
			t.Errorf("%T: got %#v, want an *Error of kind %v saying %q", tt.ev, err, tt.kind, tt.msg)
			continue
		}
		if want := tt.kind.Error() + ": " + tt.msg; err.Error() != want {
			t.Errorf("%T: Error() = %q, want %q", tt.ev, err.Error(), want)
		}
	}
}
