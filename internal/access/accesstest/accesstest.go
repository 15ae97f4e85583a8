// Package accesstest has what tests of the access checks share: an
// authorizer that records what it is asked.
package accesstest

import (
	"context"
	"sync"

	"github.com/sharq-dev/sharq/internal/access"
)

// Call is one question put to an authorizer.
type Call struct {
	Principal, Action, Resource string
}

// Recorder is an access.Authorizer that remembers what it was asked and
// allows it, or denies everything when Deny is set.
type Recorder struct {
	Deny bool

	mu    sync.Mutex
	calls []Call
}

func (r *Recorder) Authorize(_ context.Context, id access.Identity, action, resource string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, Call{id.Principal, action, resource})
	if r.Deny {
		return access.Deny(id, action, resource)
	}
	return nil
}

// SetDeny makes the recorder deny everything from now on, or allow it.
func (r *Recorder) SetDeny(deny bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Deny = deny
}

// Take returns the questions asked since the last Take.
func (r *Recorder) Take() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}
