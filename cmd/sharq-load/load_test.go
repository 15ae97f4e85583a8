package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testserver"
)

func TestKueueBaselinePlan(t *testing.T) {
	w := kueueBaseline("kb")
	plan := w.plan()
	if len(plan) != 15000 {
		t.Fatalf("plan has %d jobs, want 15,000", len(plan))
	}
	count := map[string]int{}
	var last time.Duration
	for i, p := range plan {
		if i > 0 && p.At < plan[i-1].At {
			t.Fatalf("plan not in time order at %d", i)
		}
		count[w.Classes[p.Class].Name]++
		last = max(last, p.At)
		c := w.Classes[p.Class]
		if p.Spec.Instances != c.Instances || p.Spec.RuntimeMs != c.RuntimeMs || p.Spec.Priority != c.Priority {
			t.Fatalf("job %s does not have its class's shape: %+v", p.Spec.Name, p.Spec)
		}
	}
	if count["small"] != 10500 || count["medium"] != 3000 || count["large"] != 1500 {
		t.Errorf("jobs by class = %v, want small 10500, medium 3000, large 1500", count)
	}
	if last != 58800*time.Millisecond {
		t.Errorf("last submission at %v, want 58.8s", last)
	}
	if got := w.physicalLimit(); got != 66*time.Second {
		t.Errorf("physical limit %v, want 66s (7,920 instance-seconds per queue on 120)", got)
	}
	qs := w.queues()
	if len(qs) != 5 || len(qs[0].Shares) != 6 || qs[0].Capacity != 120 || qs[0].Shares[0].Capacity != 20 || qs[0].Shares[0].BorrowLimit != 500 || !qs[0].Shares[0].InShare {
		t.Errorf("queues do not match the baseline's mapping: %+v", qs[0])
	}
}

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := summarize(d)
	if s.Count != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond || s.Mean != 50500*time.Microsecond {
		t.Errorf("summary %+v", s)
	}
	if summarize(nil) != (summary{}) {
		t.Error("an empty sample does not summarise to zero")
	}
}

func TestAnalyse(t *testing.T) {
	w := workload{Queues: 1, Shares: 2, ShareCapacity: 10, Prefix: "t",
		Classes: []jobClass{{Name: "a", Count: 1, Instances: 2, RuntimeMs: 1000}, {Name: "b", Count: 1, Instances: 10, RuntimeMs: 1000}}}
	subs := []submission{
		{id: "1", class: 0, spec: jobSpec{Queue: "t-q0", Share: "cq0"}},
		{id: "2", class: 1, spec: jobSpec{Queue: "t-q0", Share: "cq1"}},
	}
	v1 := jobView{Status: "SUCCEEDED", CreatedAt: 1000, ScheduledAt: 1000, StoppedAt: 3000, CapacityUsage: []struct {
		Quantity float64 `json:"quantity"`
	}{{2}}}
	v1.Attempts = append(v1.Attempts, struct {
		StartedAt int64 `json:"startedAt"`
		StoppedAt int64 `json:"stoppedAt"`
	}{1000, 3000})
	// Job 2 waited 500 ms, was preempted after 500 ms and ran again for 1 s.
	v2 := jobView{Status: "SUCCEEDED", CreatedAt: 1000, ScheduledAt: 2000, StoppedAt: 3000, CapacityUsage: v1.CapacityUsage}
	v2.CapacityUsage = []struct {
		Quantity float64 `json:"quantity"`
	}{{10}}
	v2.PreemptionSummary = &struct {
		PreemptedAttemptCount int `json:"preemptedAttemptCount"`
	}{1}
	v2.Attempts = append(v2.Attempts, struct {
		StartedAt int64 `json:"startedAt"`
		StoppedAt int64 `json:"stoppedAt"`
	}{1500, 2000}, struct {
		StartedAt int64 `json:"startedAt"`
		StoppedAt int64 `json:"stoppedAt"`
	}{2000, 3000})
	r := analyse(w, subs, []jobView{v1, v2})
	if r.Wall != 2*time.Second || r.Succeeded != 2 || r.Preemptions != 1 {
		t.Errorf("wall %v, succeeded %d, preemptions %d; want 2s, 2, 1", r.Wall, r.Succeeded, r.Preemptions)
	}
	if r.Classes[0].Mean != 0 || r.Classes[1].Mean != 500*time.Millisecond {
		t.Errorf("waits %v and %v, want 0 and 500ms (the first dispatch, not the last)", r.Classes[0].Mean, r.Classes[1].Mean)
	}
	// Share 0: 2 instances × 2 s of 10 × 2 s = 20 %; share 1: 10 × 1.5 s of
	// 10 × 2 s = 75 %.
	if want := (0.2 + 0.75) / 2; r.AvgShareUsage < want-1e-9 || r.AvgShareUsage > want+1e-9 {
		t.Errorf("average share usage %v, want %v", r.AvgShareUsage, want)
	}
}

func TestReadResponse(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}" +
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
	br := bufio.NewReader(strings.NewReader(in))
	status, body, keep, err := readResponse(br, nil)
	if err != nil || status != 200 || string(body) != `{"a":1}` || !keep {
		t.Fatalf("first response: %d %q %v %v", status, body, keep, err)
	}
	status, body, keep, err = readResponse(br, make([]byte, 0, 64))
	if err != nil || status != 400 || string(body) != `{}` || keep {
		t.Fatalf("second response: %d %q %v %v", status, body, keep, err)
	}
	if _, _, _, err := readResponse(bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")), nil); err != errChunked {
		t.Errorf("chunked response: %v", err)
	}
}

func TestSeedPlan(t *testing.T) {
	p := seedPlan{jobs: 100000, runnableFrac: 0.1, failedFrac: 0.02}
	n := map[seedKind]int{}
	for i := range p.jobs {
		n[p.kind(i)]++
	}
	if n[seedRunnable] < 9500 || n[seedRunnable] > 10500 || n[seedFailed] < 1800 || n[seedFailed] > 2200 {
		t.Errorf("kinds %v: want about 10%% runnable and 2%% failed", n)
	}
	seen := map[string]bool{}
	for i := range 10000 {
		id := seedID(i)
		if len(id) != 36 || id[14] != '7' || seen[id] || i > 0 && id < seedID(i-1) {
			t.Fatalf("seedID(%d) = %q: not a fresh, increasing version 7 UUID", i, id)
		}
		seen[id] = true
	}
}

// startTestServer serves the API in front of a real engine, SQLite store
// and simulated executor, as serve wires them.
func startTestServer(t *testing.T) string {
	t.Helper()
	return testserver.Start(t, testserver.Options{Batch: batchapi.Options{Logger: slog.New(slog.DiscardHandler)}}).URL
}

// TestBaselineSmoke runs a small baseline-shaped workload (one queue of
// six shares, a twentieth of each class's jobs, 2.5 s of submissions)
// through a real server and checks that every job ran and the figures are
// sane, the start estimates' too.
func TestBaselineSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time workload")
	}
	url := startTestServer(t)
	c, err := newClient(url, modeWire, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	w := kueueBaseline("smoke")
	w.Queues = 1
	for i := range w.Classes {
		w.Classes[i].Count /= 20
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := runWorkload(ctx, c, w, 16, 50*time.Millisecond, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.print(&out)
	t.Log("\n" + out.String())
	if r.Jobs != 144 || r.Succeeded != 144 || r.Errors != 0 {
		t.Fatalf("%d jobs, %d succeeded, %d submissions failed; want 144 succeeded", r.Jobs, r.Succeeded, r.Errors)
	}
	if r.Wall < w.physicalLimit() || r.Wall > 10*w.physicalLimit() {
		t.Errorf("wall time %v against a physical limit of %v", r.Wall, w.physicalLimit())
	}
	if r.AvgShareUsage <= 0 || r.AvgShareUsage > float64(w.Shares) {
		t.Errorf("average share usage %v", r.AvgShareUsage)
	}
	for _, cw := range r.Classes {
		if cw.Count == 0 {
			t.Errorf("class %s: no job was dispatched", cw.Name)
		}
	}
	// The first jobs start before the server knows any run time: only
	// those behind them can be estimated.
	if e := r.ETA; e == nil || e.Compared == 0 || e.PollErrors > 0 || e.Polls < 10 ||
		e.Compared+e.NoBasis+e.NotWithin+e.Never+e.Unseen != r.Jobs || e.AbsError.P90 > 5*r.Wall {
		t.Errorf("start estimates: %+v", e)
	}
}

// TestThroughputCommands runs the submit, describe and latency commands
// briefly against a real server.
func TestThroughputCommands(t *testing.T) {
	url := startTestServer(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"submit", "-endpoint", url, "-clients", "4", "-warmup", "100ms", "-duration", "300ms"},
		{"submit", "-endpoint", url, "-clients", "4", "-warmup", "100ms", "-duration", "300ms", "-client", "sdk"},
		{"describe", "-endpoint", url, "-clients", "4", "-warmup", "100ms", "-duration", "300ms", "-jobs", "50", "-client", "http"},
		{"describe", "-endpoint", url, "-clients", "4", "-warmup", "100ms", "-duration", "300ms", "-jobs", "50", "-submitters", "4"},
		{"latency", "-endpoint", url, "-n", "20", "-interval", "0s"},
	} {
		var out, errs strings.Builder
		if code := run(ctx, args, &out, &errs); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		if strings.Contains(out.String(), "first error") || !strings.Contains(out.String(), "p50") {
			t.Errorf("%v:\n%s", args, out.String())
		}
		if args[0] == "describe" && !strings.Contains(out.String(), "reads of the engine") {
			t.Errorf("%v: no count of the engine's reads:\n%s", args, out.String())
		}
	}
}

func TestSeedAndLoad(t *testing.T) {
	dir := t.TempDir()
	info, err := seed(context.Background(), dir, "", seedPlan{jobs: 400, runnableFrac: 0.25, failedFrac: 0.1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Running != 120 || info.Runnable+info.Ended+info.Running != 400 || len(info.Sample) == 0 {
		t.Fatalf("seed info %+v", info)
	}
	// The store loads into an engine, which knows every seeded job.
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(context.Background(), engine.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	counts := eng.StatusCounts()
	if counts["RUNNING"] != 120 || counts["RUNNABLE"] != info.Runnable || counts["SUCCEEDED"]+counts["FAILED"] != info.Ended {
		t.Errorf("loaded counts %v for %+v", counts, info)
	}
	for _, id := range info.Sample {
		if _, err := eng.DescribeServiceJob(context.Background(), id); err != nil {
			t.Errorf("describe seeded job %s: %v", id, err)
		}
	}
}
