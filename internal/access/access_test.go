package access_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
)

// Ensure the middleware authenticates once and hands the caller to the
// route through the context.
func TestMiddlewarePutsCallerInContext(t *testing.T) {
	alice := access.Identity{AccessKeyID: "AKIDALICE", Principal: "arn:aws:iam::123456789012:user/alice"}
	calls := 0
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) {
		calls++
		return alice, nil
	})
	var got access.Identity
	var ok bool
	h := access.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok = access.FromContext(r.Context())
	}), authn, func(http.ResponseWriter, *http.Request, error) { t.Error("fail called") })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/anything", nil))
	if calls != 1 || !ok || got != alice {
		t.Errorf("authenticated %d times; route saw %+v (%v), want %+v", calls, got, ok, alice)
	}
}

// Ensure a request that fails authentication goes no further.
func TestMiddlewareRefuses(t *testing.T) {
	bad := &access.AuthError{Status: 403, Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return access.Identity{}, bad })
	var failed error
	h := access.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the route was reached") }),
		authn, func(w http.ResponseWriter, _ *http.Request, err error) { failed = err; w.WriteHeader(403) })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/submitservicejob", nil))
	if rec.Code != 403 || !errors.Is(failed, bad) {
		t.Errorf("status %d, fail got %v", rec.Code, failed)
	}
}

func TestDefaults(t *testing.T) {
	id, err := access.AnonymousAuthenticator{}.Authenticate(httptest.NewRequest("GET", "/", nil))
	if err != nil || id != access.Anonymous || !id.Anonymous || id.Principal != "anonymous" {
		t.Errorf("AnonymousAuthenticator: %+v, %v", id, err)
	}
	if err := (access.AllowAll{}).Authorize(context.Background(), id, "batch:TerminateServiceJob", "*"); err != nil {
		t.Errorf("AllowAll: %v", err)
	}
	// A context that did not pass through the middleware is anonymous.
	if got := access.Caller(context.Background()); got != access.Anonymous {
		t.Errorf("Caller of a bare context: %+v", got)
	}
	if _, ok := access.FromContext(context.Background()); ok {
		t.Error("FromContext found an identity in a bare context")
	}
}

// Ensure a refusal reads as AWS's AccessDeniedException message.
func TestDeniedMessage(t *testing.T) {
	job := "arn:aws:batch:us-east-1:123456789012:service-job/a4d6c728"
	d := access.Deny(access.Identity{Principal: "arn:aws:iam::123456789012:user/bob"}, "batch:TerminateServiceJob", job)
	want := "User: arn:aws:iam::123456789012:user/bob is not authorized to perform: batch:TerminateServiceJob on resource: " + job
	if d.Error() != want {
		t.Errorf("got %q\nwant %q", d.Error(), want)
	}
	d.Reason = "no identity-based policy allows the batch:TerminateServiceJob action"
	if d.Error() != want+" because "+d.Reason {
		t.Errorf("with a reason: %q", d.Error())
	}
}
