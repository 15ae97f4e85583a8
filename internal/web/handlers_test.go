package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/web"
)

func request(t *testing.T, method, url, contentType, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestJobRoutes checks the console's JSON routes on good and bad requests.
func TestJobRoutes(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	w := s.step1()
	jobs := s.url + "/sharq/v1/jobs/"

	for _, c := range []struct {
		name, path, contentType, body string
		status                        int
		msg                           string
	}{
		{"not JSON", w.low + "/priority", "text/plain", `{"schedulingPriority":2}`, 415, "application/json"},
		{"no priority", w.low + "/priority", "application/json", `{}`, 400, "schedulingPriority is required"},
		{"priority too high", w.low + "/priority", "application/json", `{"schedulingPriority":10000}`, 400, "between 0 and 9999"},
		{"bad JSON", w.low + "/priority", "application/json", `{"schedulingPriority":`, 400, "not valid JSON"},
		{"unknown job", "nope/priority", "application/json", `{"schedulingPriority":2}`, 404, "does not exist"},
		{"terminate unknown job", "nope/terminate", "application/json", `{}`, 404, "does not exist"},
	} {
		status, body := request(t, "POST", jobs+c.path, c.contentType, c.body)
		if status != c.status || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, status, body, c.status, c.msg)
		}
	}

	status, body := request(t, "POST", jobs+w.low+"/priority", "application/json; charset=utf-8", `{"schedulingPriority":2}`)
	if status != 200 || !strings.Contains(body, `"schedulingPriority":2`) {
		t.Fatalf("set priority: %d %s", status, body)
	}
	if j := s.wait(w.low, "RUNNABLE"); j.SchedulingPriority != 2 {
		t.Errorf("priority on the server: %d", j.SchedulingPriority)
	}

	status, body = request(t, "GET", s.url+"/sharq/v1/console/jobs/"+w.low, "", "")
	var d web.JobDetail
	if err := json.Unmarshal([]byte(body), &d); status != 200 || err != nil {
		t.Fatalf("job detail: %d %s %v", status, body, err)
	}
	if d.Job.JobID != w.low || d.Position != 1 || d.Reason == "" || len(d.Events) == 0 {
		t.Errorf("job detail: position %d reason %q, %d events", d.Position, d.Reason, len(d.Events))
	}

	status, body = request(t, "POST", jobs+w.med+"/terminate", "application/json", `{}`)
	if status != 200 {
		t.Fatalf("terminate: %d %s", status, body)
	}
	if j := s.wait(w.med, "FAILED"); !j.IsTerminated || j.StatusReason != "Terminated from the sharq console" {
		t.Errorf("terminated job: %v %q", j.IsTerminated, j.StatusReason)
	}
	status, body = request(t, "POST", jobs+w.med+"/priority", "application/json", `{"schedulingPriority":2}`)
	if status != 400 || !strings.Contains(body, "terminal") {
		t.Errorf("priority of an ended job: %d %s", status, body)
	}
}

// TestPages checks that the page and its assets are served from the
// binary with the types a browser needs.
func TestPages(t *testing.T) {
	s := start(t)
	for _, c := range []struct{ path, ctype, has string }{
		{"/", "text/html", `src="/assets/app.js"`},
		{"/jobs/anything", "text/html", `src="/assets/app.js"`},
		{"/assets/app.js", "javascript", "EventSource"},
		{"/assets/app.css", "text/css", ".seg.own"},
	} {
		resp, err := http.Get(s.url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(b), c.has) {
			t.Errorf("GET %s: %d %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if status, _ := request(t, "GET", s.url+"/nothing-here", "", ""); status != 404 {
		t.Errorf("GET /nothing-here: %d", status)
	}
}

// TestCloseEndsStreams checks that closing the console ends open streams,
// so that a server shutting down does not wait for open pages.
func TestCloseEndsStreams(t *testing.T) {
	console := web.New(web.Options{})
	s := start(t)
	mux := http.NewServeMux()
	console.Mount(mux, s.eng, s.api)
	srv := serveMux(t, mux)
	in := openStream(t, srv)
	select {
	case <-in:
	case <-time.After(5 * time.Second):
		t.Fatal("no first event")
	}
	console.Close()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-in:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream is still open after Close")
		}
	}
}
