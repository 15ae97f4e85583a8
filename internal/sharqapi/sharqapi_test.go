package sharqapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

var base = arn.NewBase("us-east-1", "000000000000")

// Ensure the shares route splits each share's use into own and borrowed
// and the lender's into lent, per unit.
func TestShares(t *testing.T) {
	s := start(t, sharqapi.Options{})
	s.walkthrough()
	var u sharqapi.Usage
	s.get("GET", "/sharq/v1/shares", "", &u)
	if len(u.Queues) != 1 || u.Queues[0].Name != queue || u.Queues[0].ServiceEnvironment != "my-sm-training-qm-se" {
		t.Fatalf("queues: %+v", u.Queues)
	}
	q := u.Queues[0]
	if diff := cmp.Diff([]sharqapi.UnitUsage{{Unit: "ml.g5.xlarge", Limit: 3, Used: 2, Idle: 1}}, q.Capacity); diff != "" {
		t.Errorf("environment capacity (-want +got):\n%s", diff)
	}
	got := map[string]sharqapi.UnitUsage{}
	for _, sh := range q.Shares {
		if len(sh.Units) != 1 {
			t.Fatalf("share %s units: %+v", sh.Name, sh.Units)
		}
		got[sh.Name] = sh.Units[0]
	}
	// QS1 runs one job on its own instance and borrows an idle one. Which
	// lender lends it is the scheduler's business; between them they lend
	// one and keep one idle.
	if qs1 := got["QS1"]; qs1.Own != 1 || qs1.Borrowed != 1 || qs1.Used != 2 {
		t.Errorf("QS1: %+v", qs1)
	}
	if lent, idle := got["QS2"].Lent+got["QS3"].Lent, got["QS2"].Idle+got["QS3"].Idle; lent != 1 || idle != 1 {
		t.Errorf("QS2 %+v, QS3 %+v: want one lent and one idle between them", got["QS2"], got["QS3"])
	}
	if u.JobCounts["RUNNING"] != 2 || u.JobCounts["RUNNABLE"] != 1 {
		t.Errorf("job counts: %v", u.JobCounts)
	}
}

// Ensure positions tell where a waiting job stands and why, list unknown
// jobs apart, and refuse bad requests.
func TestPositions(t *testing.T) {
	s := start(t, sharqapi.Options{})
	high, _, low := s.walkthrough()
	var p sharqapi.Positions
	s.get("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+low+`","`+base.ServiceJob(high)+`","nope"]}`, &p)
	if len(p.Jobs) != 2 || !slices.Equal(p.Unknown, []string{"nope"}) {
		t.Fatalf("positions: %+v", p)
	}
	if w := p.Jobs[0]; w.JobID != low || w.Place != 1 || w.Share != "QS1" || w.Queue != queue || w.Priority != 1 || !strings.Contains(w.Reason, "QS1") {
		t.Errorf("low: %+v", w)
	}
	if r := p.Jobs[1]; r.JobID != high || r.Status != "RUNNING" || r.Place != 0 || r.Reason != "" {
		t.Errorf("high: %+v", r)
	}
	wantError(t, s.do("POST", "/sharq/v1/jobs/positions", `{"jobIds":`), 400, "not a positions request")
	many, _ := json.Marshal(sharqapi.PositionsRequest{JobIDs: make([]string, sharqapi.MaxPositions+1)})
	wantError(t, s.do("POST", "/sharq/v1/jobs/positions", string(many)), 400, "at most 1000 jobs")
}

// Ensure a job's events are its state changes, oldest first, by ID or ARN.
func TestJobEvents(t *testing.T) {
	s := start(t, sharqapi.Options{})
	high, _, _ := s.walkthrough()
	for _, ref := range []string{high, url.PathEscape(base.ServiceJob(high))} {
		var evs sharqapi.JobEvents
		s.get("GET", "/sharq/v1/jobs/"+ref+"/events", "", &evs)
		var statuses []string
		for _, ev := range evs.Events {
			if ev.Detail.JobID != high {
				t.Errorf("event of job %s", ev.Detail.JobID)
			}
			statuses = append(statuses, ev.Detail.Status)
		}
		if !slices.Equal(statuses, []string{"SCHEDULED", "STARTING", "RUNNING"}) {
			t.Errorf("%s: statuses %v", ref, statuses)
		}
	}
	wantError(t, s.do("GET", "/sharq/v1/jobs/nope/events", ""), 404, "does not exist")
}

// Ensure logs are served in chunks from an offset, with the attempt and
// the job's status in headers.
func TestLogs(t *testing.T) {
	logs := &logDir{dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(logs.dir, "algo-1.stdout"), []byte("epoch 1\nepoch 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, sharqapi.Options{Logs: logs})
	high, _, low := s.walkthrough()

	r := s.do("GET", "/sharq/v1/jobs/"+high+"/logs?offset=8", "")
	if r.status != 200 || r.body != "epoch 2\n" || r.header.Get(sharqapi.HeaderNextOffset) != "16" ||
		r.header.Get(sharqapi.HeaderAttempt) != "1" || r.header.Get(sharqapi.HeaderJobStatus) != "RUNNING" {
		t.Errorf("logs: %d %q %v", r.status, r.body, r.header)
	}
	j := s.wait(high, "RUNNING")
	if want := filepath.Base(j.Attempts[0].ServiceResourceID.Value); !slices.Contains(logs.ids, want) {
		t.Errorf("asked the executor for %v, want %s", logs.ids, want)
	}
	if r := s.do("GET", "/sharq/v1/jobs/"+high+"/logs?stream=stderr", ""); r.status != 200 || r.body != "" || r.header.Get(sharqapi.HeaderNextOffset) != "0" {
		t.Errorf("a log not written yet: %d %q %v", r.status, r.body, r.header)
	}
	if r := s.do("GET", "/sharq/v1/jobs/"+low+"/logs", ""); r.status != 200 || r.header.Get(sharqapi.HeaderAttempt) != "0" {
		t.Errorf("a job without an attempt: %d %v", r.status, r.header)
	}
	wantError(t, s.do("GET", "/sharq/v1/jobs/"+high+"/logs?host=evil", ""), 400, "host must be algo-N")
	wantError(t, s.do("GET", "/sharq/v1/jobs/"+high+"/logs?offset=-1", ""), 400, "not a non-negative integer")
	wantError(t, s.do("GET", "/sharq/v1/jobs/"+high+"/logs?attempt=2", ""), 404, "has 1 attempts, not 2")
	wantError(t, s.do("GET", "/sharq/v1/jobs/nope/logs", ""), 404, "does not exist")

	none := start(t, sharqapi.Options{})
	wantError(t, none.do("GET", "/sharq/v1/jobs/x/logs", ""), 501, "keeps no job logs")
}

// Ensure the event stream sends the backlog that matches its filter, then
// follows new events until the server closes it.
func TestEvents(t *testing.T) {
	s := start(t, sharqapi.Options{})
	high, _, low := s.walkthrough()

	r := s.do("GET", "/sharq/v1/events?job="+high, "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("events: %d %v", r.status, r.header)
	}
	for line := range strings.Lines(r.body) {
		var ev batchapi.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Detail.JobID != high {
			t.Errorf("line %q: %v", line, err)
		}
	}

	req, _ := http.NewRequest("GET", s.url+"/sharq/v1/events?follow=true&queue="+queue+"&share=QS2", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan batchapi.Event)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev batchapi.Event
			json.Unmarshal(sc.Bytes(), &ev)
			lines <- ev
		}
	}()
	qs2 := s.submit("qs2", "QS2", 1)
	for deadline := time.After(10 * time.Second); ; {
		select {
		case ev := <-lines:
			if ev.Detail.QuotaShareName != "QS2" || ev.Detail.JobID == low {
				t.Fatalf("followed an event of another share: %+v", ev.Detail)
			}
			if ev.Detail.JobID != qs2 || ev.Detail.Status != "RUNNING" {
				continue
			}
			s.api.Close()
			for range lines { // the stream ends
			}
			return
		case <-deadline:
			t.Fatal("qs2 never showed RUNNING on the stream")
		}
	}
}

func TestUnknownRoute(t *testing.T) {
	s := start(t, sharqapi.Options{})
	wantError(t, s.do("GET", "/sharq/v1/nothing", ""), 404, "no such sharq route: GET /sharq/v1/nothing")
	wantError(t, s.do("DELETE", "/sharq/v1/shares", ""), 404, "no such sharq route")
}

// routeCase is a good request to one route and what it is authorized on.
type routeCase struct {
	method, path, body string
	action, resource   string
}

func routeCases(job string) map[string]routeCase {
	jobARN := base.ServiceJob(job)
	return map[string]routeCase{
		"GET /sharq/v1/shares":            {"GET", "/sharq/v1/shares", "", access.ActionGetShareUsage, "*"},
		"POST /sharq/v1/jobs/positions":   {"POST", "/sharq/v1/jobs/positions", `{"jobIds":["` + job + `"]}`, access.ActionGetJobPositions, "*"},
		"GET /sharq/v1/jobs/match":        {"GET", "/sharq/v1/jobs/match?id=" + job[len(job)-8:], "", access.ActionGetJobMatches, "*"},
		"GET /sharq/v1/estimates":         {"GET", "/sharq/v1/estimates", "", access.ActionGetStartEstimates, "*"},
		"GET /sharq/v1/whoami":            {"GET", "/sharq/v1/whoami", "", access.ActionGetCallerIdentity, "*"},
		"GET /sharq/v1/usage":             {"GET", "/sharq/v1/usage?since=1d&by=owner", "", access.ActionGetUsage, "*"},
		"GET /sharq/v1/jobs/{job}/events": {"GET", "/sharq/v1/jobs/" + job + "/events", "", access.ActionGetJobEvents, jobARN},
		"GET /sharq/v1/jobs/{job}/logs":   {"GET", "/sharq/v1/jobs/" + url.PathEscape(jobARN) + "/logs", "", access.ActionGetLogs, jobARN},
		"GET /sharq/v1/events":            {"GET", "/sharq/v1/events?queue=" + queue, "", access.ActionGetEvents, base.JobQueue(queue)},
		"POST /sharq/v1/dryrun": {"POST", "/sharq/v1/dryrun", `{"jobName":"j","jobQueue":"` + queue + `","serviceJobType":"SAGEMAKER_TRAINING",` +
			`"quotaShareName":"QS3","serviceRequestPayload":"{\"ResourceConfig\":{\"InstanceType\":\"ml.g5.xlarge\",\"InstanceCount\":1}}"}`,
			access.ActionDryRunSubmitServiceJob, base.QuotaShare(queue, "QS3")},
		"PUT /sharq/v1/queues/{queue}/shares/{share}/settings": {"PUT", sharqapi.ShareSettingsPath(queue, "QS2"), `{"minimumRuntimeSeconds":60}`,
			access.ActionUpdateQuotaShareSettings, base.QuotaShare(queue, "QS2")},
	}
}

// Ensure a share's settings route sets its minimum runtime, which the
// shares route then shows, and refuses bad input, changing nothing.
func TestShareSettings(t *testing.T) {
	s := start(t, sharqapi.Options{})
	minimum := func(share string) int {
		var u sharqapi.Usage
		s.get("GET", "/sharq/v1/shares", "", &u)
		for _, sh := range u.Queues[0].Shares {
			if sh.Name == share {
				return sh.MinimumRuntimeSeconds
			}
		}
		t.Fatalf("no share %s", share)
		return 0
	}
	if r := s.do("PUT", sharqapi.ShareSettingsPath(queue, "QS1"), `{"minimumRuntimeSeconds":300}`); r.status != 200 || r.body != `{"minimumRuntimeSeconds":300}`+"\n" {
		t.Errorf("PUT settings: %d %q", r.status, r.body)
	}
	if got := minimum("QS1"); got != 300 {
		t.Errorf("QS1's minimum runtime after the PUT: %d, want 300", got)
	}
	for body, want := range map[string]int{
		`{"minimumRuntimeSeconds":-1}`: 400,
		`{"minimumRuntime":60}`:        400,
		`not json`:                     400,
	} {
		if r := s.do("PUT", sharqapi.ShareSettingsPath(queue, "QS1"), body); r.status != want {
			t.Errorf("PUT settings %s: %d %s, want %d", body, r.status, r.body, want)
		}
	}
	if r := s.do("PUT", sharqapi.ShareSettingsPath(queue, "NOPE"), `{"minimumRuntimeSeconds":1}`); r.status != 404 {
		t.Errorf("PUT settings of a missing share: %d %s, want 404", r.status, r.body)
	}
	if got := minimum("QS1"); got != 300 {
		t.Errorf("QS1's minimum runtime after refused PUTs: %d, want 300", got)
	}
}

// recordingMux lists the patterns registered on it.
type recordingMux struct{ patterns []string }

func (m *recordingMux) HandleFunc(pattern string, _ func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
}

// Ensure every route asks the authorizer once, with the authenticated
// caller, its action and resource, and that a refusal is a 403 in AWS's
// words that reveals nothing.
func TestRoutesAuthorize(t *testing.T) {
	rec := &accesstest.Recorder{}
	s := start(t, sharqapi.Options{Authorizer: rec, Logs: &logDir{dir: t.TempDir()}})
	job := s.submit("j", "QS1", 1)
	s.wait(job, "RUNNING")
	cases := routeCases(job)
	var mux recordingMux
	s.api.Mount(&mux)
	for _, p := range mux.patterns {
		if p == "/sharq/v1/" { // the 404 for other paths: no operation
			continue
		}
		c, ok := cases[p]
		if !ok {
			t.Errorf("route %s has no case here: add one", p)
			continue
		}
		rec.Take()
		rec.SetDeny(false)
		if r := s.do(c.method, c.path, c.body); r.status != 200 {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
		want := []accesstest.Call{{Principal: tester.Principal, Action: c.action, Resource: c.resource}}
		if got := rec.Take(); !slices.Equal(got, want) {
			t.Errorf("%s: authorizer asked %v, want %v", p, got, want)
		}

		rec.SetDeny(true)
		r := s.do(c.method, c.path, c.body)
		msg := "User: " + tester.Principal + " is not authorized to perform: " + c.action + " on resource: " + c.resource
		var body struct{ Type, Message string }
		json.Unmarshal([]byte(r.body), &body)
		if r.status != 403 || body.Message != msg || strings.Contains(r.body, job) && !strings.Contains(msg, job) {
			t.Errorf("%s refused: %d %s, want 403 with %q", p, r.status, r.body, msg)
		}
		delete(cases, p)
	}
	for p := range cases {
		t.Errorf("case %s names no route", p)
	}
}

// Ensure a dry-run the caller may not make is AccessDeniedException in
// AWS's shape, which the client reports as such.
func TestDryRunDenied(t *testing.T) {
	s := start(t, sharqapi.Options{Authorizer: &accesstest.Recorder{Deny: true}})
	_, err := sharqapi.RequestDryRun(context.Background(), nil, s.url, batchapi.SubmitServiceJobRequest{JobName: "j", JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: "QS1", ServiceRequestPayload: `{}`})
	want := "dry-run: AccessDeniedException: User: " + tester.Principal + " is not authorized to perform: sharq:DryRunSubmitServiceJob on resource: " + base.QuotaShare(queue, "QS1")
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
