package access

import (
	"context"
	"fmt"
	"net/http"
)

// Identity is the caller of a request, as authentication established it.
type Identity struct {
	// AccessKeyID is the access key the request was signed with; empty
	// for an anonymous caller.
	AccessKeyID string
	// Principal names the caller in messages and policies, as an IAM ARN
	// (arn:aws:iam::123456789012:user/alice), or "anonymous".
	Principal string
	// Anonymous is true when the caller proved no identity.
	Anonymous bool
}

// Anonymous is the identity of a caller who proved none.
var Anonymous = Identity{Principal: "anonymous", Anonymous: true}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the caller's identity and whether authentication
// put one in ctx.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Caller returns the caller's identity. A context that did not pass
// through Middleware carries the Anonymous caller, so a policy that refuses
// anonymous callers refuses it too.
func Caller(ctx context.Context) Identity {
	if id, ok := FromContext(ctx); ok {
		return id
	}
	return Anonymous
}

// Authenticator establishes who sent a request.
type Authenticator interface {
	// Authenticate returns the caller of r. It reads r (headers, query,
	// body digest) but must leave r.Body readable. It returns an *AuthError
	// when the request's credentials are missing or wrong; any other error
	// is answered as an internal error.
	Authenticate(r *http.Request) (Identity, error)
}

// AuthenticatorFunc is a function that is an Authenticator.
type AuthenticatorFunc func(r *http.Request) (Identity, error)

func (f AuthenticatorFunc) Authenticate(r *http.Request) (Identity, error) { return f(r) }

// AnonymousAuthenticator authenticates every request as Anonymous,
// whatever credentials it carries.
type AnonymousAuthenticator struct{}

func (AnonymousAuthenticator) Authenticate(*http.Request) (Identity, error) { return Anonymous, nil }

// AuthError is a request refused by authentication, as AWS words it: Code
// is AWS's error code (UnrecognizedClientException,
// InvalidSignatureException, ...), Status the HTTP status that goes with it
// (403 and AccessDeniedException when unset).
type AuthError struct {
	Status  int
	Code    string
	Message string
}

func (e *AuthError) Error() string { return e.Code + ": " + e.Message }

// Authorizer decides whether a caller may perform an action on a resource.
type Authorizer interface {
	// Authorize returns nil when id may perform action (e.g.
	// "batch:TerminateServiceJob") on resource (an ARN, or "*" for an
	// operation on no one resource), a *DeniedError when it may not, and
	// any other error when it cannot tell (answered as an internal error).
	Authorize(ctx context.Context, id Identity, action, resource string) error
}

// AuthorizerFunc is a function that is an Authorizer.
type AuthorizerFunc func(ctx context.Context, id Identity, action, resource string) error

func (f AuthorizerFunc) Authorize(ctx context.Context, id Identity, action, resource string) error {
	return f(ctx, id, action, resource)
}

// AllowAll allows every caller every action.
type AllowAll struct{}

func (AllowAll) Authorize(context.Context, Identity, string, string) error { return nil }

// DeniedError is an action refused to a caller. Its text is AWS's
// AccessDeniedException message.
type DeniedError struct {
	Principal string
	Action    string
	Resource  string
	// Reason, if set, ends the message: "because no identity-based policy
	// allows the batch:SubmitServiceJob action".
	Reason string
}

// Deny returns the refusal of action on resource to id.
func Deny(id Identity, action, resource string) *DeniedError {
	return &DeniedError{Principal: id.Principal, Action: action, Resource: resource}
}

func (e *DeniedError) Error() string {
	msg := fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s", e.Principal, e.Action, e.Resource)
	if e.Reason != "" {
		msg += " because " + e.Reason
	}
	return msg
}

// Middleware authenticates every request once with authn and serves it
// with the caller's Identity in its context. A request that fails
// authentication is answered by fail, with the *AuthError (or other error)
// authn returned, and does not reach next.
func Middleware(next http.Handler, authn Authenticator, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := authn.Authenticate(r)
		if err != nil {
			fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}
