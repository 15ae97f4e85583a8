package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/web"
)

// sse is one server-sent event.
type sse struct {
	name string
	data string
}

// openStream reads /sharq/v1/stream into a channel until the test ends.
func openStream(t *testing.T, url string) <-chan sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/sharq/v1/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("stream answered %d %s", resp.StatusCode, ct)
	}
	out := make(chan sse, 4096)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					out <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// collector gathers what a stream delivers.
type collector struct {
	t      *testing.T
	in     <-chan sse
	jobs   []batchapi.Event
	states []web.State
}

// until reads the stream until cond holds, failing after 10 s.
func (c *collector) until(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case ev, ok := <-c.in:
			if !ok {
				c.t.Fatalf("stream ended waiting for %s", what)
			}
			c.add(ev)
		case <-deadline:
			c.t.Fatalf("no %s on the stream after 10 s", what)
		}
	}
}

func (c *collector) add(ev sse) {
	c.t.Helper()
	switch ev.name {
	case "job":
		var je batchapi.Event
		if err := json.Unmarshal([]byte(ev.data), &je); err != nil {
			c.t.Fatalf("job event %q: %v", ev.data, err)
		}
		c.jobs = append(c.jobs, je)
	case "state":
		var st web.State
		if err := json.Unmarshal([]byte(ev.data), &st); err != nil {
			c.t.Fatalf("state %q: %v", ev.data, err)
		}
		c.states = append(c.states, st)
	default:
		c.t.Fatalf("unknown event %q", ev.name)
	}
}

// statuses lists the statuses a job's events announce, in stream order.
func (c *collector) statuses(id string) []string {
	var out []string
	for _, ev := range c.jobs {
		if ev.Detail.JobID == id {
			out = append(out, ev.Detail.Status)
		}
	}
	return out
}

// index finds the n-th (1-based) event of a job with a status.
func (c *collector) index(id, status string, n int) int {
	for i, ev := range c.jobs {
		if ev.Detail.JobID == id && ev.Detail.Status == status {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// lastIndex finds the last event of a job with a status.
func (c *collector) lastIndex(id, status string) int {
	for i := len(c.jobs) - 1; i >= 0; i-- {
		if ev := c.jobs[i]; ev.Detail.JobID == id && ev.Detail.Status == status {
			return i
		}
	}
	return -1
}

func (c *collector) hasStatuses(id string, want ...string) func() bool {
	return func() bool { return len(c.statuses(id)) >= len(want) }
}

// TestStreamCarriesEveryTransition runs the walkthrough with a stream open
// and checks that it announced every transition of every job, in order,
// exactly as the job's own history has them, and that preemptions come
// before the dispatches they make room for.
func TestStreamCarriesEveryTransition(t *testing.T) {
	s := start(t)
	c := &collector{t: t, in: openStream(t, s.url)}
	c.until("first state", func() bool { return len(c.states) > 0 })
	s.setupWalkthrough()
	w := s.step1()
	s.step2(&w)
	if _, err := s.eng.UpdateServiceJob(context.Background(), w.low, 4); err != nil {
		t.Fatal(err)
	}
	s.step3wait(w)

	// A job placed in the cycle that accepts it goes from SUBMITTED (which
	// is no event) straight to SCHEDULED; one that waits first is RUNNABLE.
	dispatch := []string{"SCHEDULED", "STARTING", "RUNNING"}
	want := map[string][]string{
		w.high: append(slices.Clone(dispatch), "RUNNABLE"),
		w.med:  append(slices.Clone(dispatch), "RUNNABLE"),
		w.low:  append([]string{"RUNNABLE"}, dispatch...),
		w.qs2:  dispatch,
	}
	for id, statuses := range want {
		c.until("events of "+id, c.hasStatuses(id, statuses...))
		if got := c.statuses(id); len(got) > 0 && got[0] == "RUNNABLE" && statuses[0] != "RUNNABLE" {
			want[id] = append([]string{"RUNNABLE"}, statuses...)
			c.until("events of "+id, c.hasStatuses(id, want[id]...))
		}
	}
	for id, statuses := range want {
		if got := c.statuses(id); !slices.Equal(got, statuses) {
			t.Errorf("stream statuses of %s = %v, want %v", id, got, statuses)
		}
		history, err := s.eng.JobEvents(id)
		if err != nil {
			t.Fatal(err)
		}
		var streamed []batchapi.Event
		for _, ev := range c.jobs {
			if ev.Detail.JobID == id {
				streamed = append(streamed, ev)
			}
		}
		if len(history) != len(streamed) {
			t.Fatalf("job %s: %d events in its history, %d streamed", id, len(history), len(streamed))
		}
		for i := range history {
			h := batchapi.EventOf(history[i], arn.Base{Partition: "aws", Region: region, AccountID: acct})
			if h.ID != streamed[i].ID || h.Time != streamed[i].Time || h.Detail.Status != streamed[i].Detail.Status {
				t.Errorf("job %s event %d: streamed %s %s %s, history %s %s %s", id, i, streamed[i].ID, streamed[i].Time,
					streamed[i].Detail.Status, h.ID, h.Time, h.Detail.Status)
			}
		}
	}
	checkShape(t, c.jobs[0])

	// Preemption makes the room: the victim is back in RUNNABLE before the
	// job that takes its place runs.
	if a, b := c.lastIndex(w.med, "RUNNABLE"), c.index(w.qs2, "RUNNING", 1); a > b {
		t.Errorf("qs2_job_1 RUNNING (event %d) announced before qs1_job_med's preemption (event %d)", b, a)
	}
	if a, b := c.lastIndex(w.high, "RUNNABLE"), c.index(w.low, "RUNNING", 1); a > b {
		t.Errorf("qs1_job_low RUNNING (event %d) announced before qs1_job_high's preemption (event %d)", b, a)
	}
	med := c.jobs[c.lastIndex(w.med, "RUNNABLE")].Detail
	if !strings.Contains(med.StatusReason, "cross-share") {
		t.Errorf("med's preemption event reason %q", med.StatusReason)
	}
	high := c.jobs[c.lastIndex(w.high, "RUNNABLE")].Detail
	if !strings.Contains(high.StatusReason, "in-share") {
		t.Errorf("high's preemption event reason %q", high.StatusReason)
	}
}

// checkShape checks an event has the EventBridge envelope of AWS Batch's
// "Batch Service Job State Change".
func checkShape(t *testing.T, ev batchapi.Event) {
	t.Helper()
	if ev.DetailType != "Batch Service Job State Change" || ev.Source != "aws.batch" || ev.Version != "0" ||
		ev.Account != acct || ev.Region != region || len(ev.Resources) != 1 || ev.Resources[0] != ev.Detail.JobArn {
		t.Errorf("event envelope: %+v", ev)
	}
	if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
		t.Errorf("event time %q: %v", ev.Time, err)
	}
	if ev.Detail.ServiceRequestPayload != "" {
		t.Errorf("event carries the request payload")
	}
}

// TestStreamPushesStateOnChange checks that a state is pushed when the
// scheduler changes something and that it shows the change: the stacked
// capacity and the front of the queue.
func TestStreamPushesStateOnChange(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	c := &collector{t: t, in: openStream(t, s.url)}
	c.until("first state", func() bool { return len(c.states) > 0 })
	w := s.step1()
	// The start estimate of the waiting job comes after the cycles that
	// placed the others: the state to look at, and the last before the
	// server is idle, has it.
	c.until("state with QS1 borrowing and an estimate of low's start", func() bool {
		st := c.states[len(c.states)-1]
		u, sh := unitOf(st, "QS1"), shareOf(st, "QS1")
		return u != nil && u.Own == 1 && u.Borrowed == 1 && len(sh.Front) == 1 && sh.Front[0].ETA != nil
	})
	st := c.states[len(c.states)-1]
	if u := unitOf(st, "QS2"); u.Lent != 1 || u.Idle != 0 {
		t.Errorf("QS2 %+v, want 1 lent", *u)
	}
	if u := unitOf(st, "QS3"); u.Idle != 1 || u.Lent != 0 {
		t.Errorf("QS3 %+v, want 1 idle (reserved)", *u)
	}
	sh := shareOf(st, "QS1")
	if len(sh.Front) != 1 || sh.Front[0].ID != w.low || sh.Front[0].Position != 1 || sh.Front[0].Reason == "" {
		t.Errorf("QS1 front %+v, want qs1_job_low first with a reason", sh.Front)
	}
	if n := len(st.Queues[0].Dispatched); n != 2 {
		t.Errorf("%d jobs holding capacity, want 2", n)
	}

	// An idle server's housekeeping cycles push nothing. Once the engine
	// has committed idle cycles (the metrics count them), a change the
	// state shows is the fence: the stream is ordered, so a state pushed
	// for an idle cycle would come before the fence's.
	n := len(c.states)
	idle := s.cycles()
	testwait.True(t, 10*time.Second, "three housekeeping cycles", func() bool { return s.cycles() >= idle+3 })
	s.submit("qs1_job_fence", "QS1", 0)
	c.until("the state with the fence job", func() bool { return len(c.states) > n })
	if front := shareOf(c.states[n], "QS1").Front; len(front) != 2 {
		t.Errorf("the first state after the idle cycles has %d jobs at QS1's front, want the fence job's 2: pushed while nothing changed", len(front))
	}
}

// cycles is how many cycles the engine has committed, from its metrics.
func (s *server) cycles() int {
	s.t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	const name = "sharq_cycle_duration_seconds_count "
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				s.t.Fatalf("%s%s: %v", name, v, err)
			}
			return n
		}
	}
	s.t.Fatalf("no %s in /metrics", strings.TrimSpace(name))
	return 0
}

func shareOf(st web.State, name string) *web.Share {
	for qi := range st.Queues {
		for si := range st.Queues[qi].Shares {
			if sh := &st.Queues[qi].Shares[si]; sh.Name == name {
				return sh
			}
		}
	}
	return nil
}

func unitOf(st web.State, share string) *web.Unit {
	sh := shareOf(st, share)
	if sh == nil || len(sh.Units) == 0 {
		return nil
	}
	return &sh.Units[0]
}

// TestFrontOfBusyShare checks that a share with more waiting jobs than the
// console orders shows its true head, from the engine's snapshot.
func TestFrontOfBusyShare(t *testing.T) {
	s := startWith(t, web.Options{MaxOrdered: 1})
	s.setupWalkthrough()
	w := s.step1()
	s.step2(&w) // QS1 waits with med (preempted, priority 2) ahead of low
	status, body := request(t, "GET", s.url+"/sharq/v1/console/state", "", "")
	var st web.State
	if err := json.Unmarshal([]byte(body), &st); status != 200 || err != nil {
		t.Fatalf("state: %d %v", status, err)
	}
	sh := shareOf(st, "QS1")
	if sh.Runnable != 2 || !sh.FrontPartial || len(sh.Front) != 1 || sh.Front[0].ID != w.med || sh.Front[0].Position != 1 {
		t.Errorf("QS1: %d waiting, partial %v, front %+v; want qs1_job_med alone at #1", sh.Runnable, sh.FrontPartial, sh.Front)
	}
}
