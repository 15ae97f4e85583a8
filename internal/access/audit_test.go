package access_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

// Ensure each mutating action asked is recorded with the result the
// caller got, a denied one as denied, reads are not, and an
// unauthenticated write is.
func TestAuditor(t *testing.T) {
	store := &accesstest.Keys{}
	aud := access.NewAuditor(store, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go aud.Run(ctx, 0)
	rec := &accesstest.Recorder{}
	authz := aud.Authorizer(rec)
	alice := access.Identity{AccessKeyID: "SKIAA", Principal: "arn:aws:iam::000000000000:user/alice"}
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, action := range []string{"batch:TerminateServiceJob", "batch:DescribeServiceJob"} {
			if err := authz.Authorize(r.Context(), access.Caller(r.Context()), action, "arn:job"); err != nil {
				w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
				w.WriteHeader(403)
				return
			}
		}
		if r.URL.Path == "/bad" {
			w.Header().Set("X-Amzn-ErrorType", "ClientException")
			w.WriteHeader(400)
		}
	})
	h := access.Middleware(aud.Middleware(route), access.AuthenticatorFunc(func(r *http.Request) (access.Identity, error) {
		if r.Header.Get("Authorization") == "" {
			return access.Identity{}, &access.AuthError{Status: 403, Code: "MissingAuthenticationTokenException"}
		}
		return alice, nil
	}), func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(403); aud.Refused(w, r, err) })
	send := func(path string, signed bool, target ...string) {
		req := httptest.NewRequest("POST", path, nil)
		if signed {
			req.Header.Set("Authorization", "x")
		}
		for _, t := range target {
			req.Header.Set("X-Amz-Target", t)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	send("/ok", true)
	send("/bad", true)
	rec.SetDeny(true)
	send("/ok", true)
	send("/ok", false)
	send("/", false, "SageMaker.DescribeTrainingJob")
	send("/", false, "SageMaker.StopTrainingJob")
	cancel()
	aud.Wait()
	got, _ := store.Audit(t.Context(), 0, 10)
	var results []string
	for _, e := range got {
		results = append(results, e.Key+" "+e.Operation+" "+e.Result)
		if e.RequestID == "" || e.Time.IsZero() || time.Since(e.Time) > time.Minute {
			t.Errorf("entry %+v", e)
		}
	}
	want := []string{"alice batch:TerminateServiceJob OK", "alice batch:TerminateServiceJob ClientException",
		"alice batch:TerminateServiceJob AccessDeniedException", "unauthenticated POST /ok MissingAuthenticationTokenException",
		"unauthenticated POST / SageMaker.StopTrainingJob MissingAuthenticationTokenException"}
	if len(results) != len(want) {
		t.Fatalf("audit log %q, want %q", results, want)
	}
	for i := range want {
		if results[i] != want[i] {
			t.Errorf("entry %d: %q, want %q", i, results[i], want[i])
		}
	}
}
