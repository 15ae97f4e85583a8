package web_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/web"
)

// streamStatus opens the event stream and returns its status once the
// headers are in.
func streamStatus(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/sharq/v1/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Ensure each console route that reads or changes data asks the
// authorizer once, the writes as UpdateServiceJob and TerminateServiceJob
// on the job, and that the page and assets ask nothing.
func TestConsoleAuthorizes(t *testing.T) {
	rec := &accesstest.Recorder{}
	s := startWith(t, web.Options{Authorizer: rec})
	s.setupWalkthrough()
	w := s.step1()
	job := arn.NewBase(region, acct).ServiceJob(w.low)
	jobs := s.url + "/sharq/v1/jobs/"
	rec.Take()
	for _, c := range []struct {
		name   string
		do     func() int
		action string
		res    string
	}{
		{"state", func() int { st, _ := request(t, "GET", s.url+"/sharq/v1/console/state", "", ""); return st }, access.ActionGetConsoleState, "*"},
		{"stream", func() int { return streamStatus(t, s.url) }, access.ActionGetConsoleState, "*"},
		{"job detail", func() int { st, _ := request(t, "GET", s.url+"/sharq/v1/console/jobs/"+w.low, "", ""); return st }, access.ActionGetJobDetail, job},
		{"priority", func() int {
			st, _ := request(t, "POST", jobs+w.low+"/priority", "application/json", `{"schedulingPriority":2}`)
			return st
		}, "batch:UpdateServiceJob", job},
		{"terminate", func() int { st, _ := request(t, "POST", jobs+w.low+"/terminate", "application/json", `{}`); return st }, "batch:TerminateServiceJob", job},
	} {
		if st := c.do(); st != 200 {
			t.Errorf("%s: %d", c.name, st)
		}
		if got, want := rec.Take(), []accesstest.Call{{Principal: tester.Principal, Action: c.action, Resource: c.res}}; !slices.Equal(got, want) {
			t.Errorf("%s: authorizer asked %v, want %v", c.name, got, want)
		}
	}
	for _, path := range []string{"/", "/jobs/" + w.high, "/assets/app.js"} {
		if st, _ := request(t, "GET", s.url+path, "", ""); st != 200 {
			t.Errorf("GET %s: %d", path, st)
		}
	}
	if got := rec.Take(); len(got) != 0 {
		t.Errorf("the page and assets asked the authorizer %v", got)
	}
}

// Ensure a refused console write answers 403 in AWS's words and changes
// nothing: the job keeps running at its priority.
func TestConsoleDenied(t *testing.T) {
	rec := &accesstest.Recorder{}
	s := startWith(t, web.Options{Authorizer: rec})
	s.setupWalkthrough()
	w := s.step1()
	rec.SetDeny(true)
	job := arn.NewBase(region, acct).ServiceJob(w.high)
	for _, c := range []struct{ path, body, action string }{
		{"/priority", `{"schedulingPriority":9}`, "batch:UpdateServiceJob"},
		{"/terminate", `{"reason":"no"}`, "batch:TerminateServiceJob"},
	} {
		st, body := request(t, "POST", s.url+"/sharq/v1/jobs/"+w.high+c.path, "application/json", c.body)
		want := `{"message":"User: ` + tester.Principal + ` is not authorized to perform: ` + c.action + ` on resource: ` + job + `"}` + "\n"
		if st != 403 || body != want {
			t.Errorf("%s: %d %s, want 403 %s", c.path, st, body, want)
		}
	}
	if st, _ := request(t, "GET", s.url+"/sharq/v1/console/state", "", ""); st != 403 {
		t.Errorf("state: %d", st)
	}
	if st := streamStatus(t, s.url); st != 403 {
		t.Errorf("stream: %d", st)
	}
	// The engine answers a write once it is committed, so one let
	// through would show already.
	if j := s.wait(w.high, "RUNNING"); j.IsTerminated || j.SchedulingPriority != 3 {
		t.Errorf("high after refused writes: terminated %v, priority %d", j.IsTerminated, j.SchedulingPriority)
	}
}
