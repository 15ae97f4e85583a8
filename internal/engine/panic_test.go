package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// syncBuffer is a log destination safe for the engine's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Ensure a panic in a cycle drops the cycle whole: every change in it
// fails with an internal error, nothing of it is kept (in memory or in the
// store), the stack is logged, and the engine goes on serving.
func TestPanicInCycleDropsIt(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	h, st, clock := syncEngine(t, engine.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	e := h.e
	running := h.submit("running", "QS1", 1)
	before := describeAll(t, e, running)

	prio := 5
	res, err := engine.ApplyInstantThenPanic(ctx, e, engine.Instant{
		Submits: []engine.SubmitServiceJobInput{{JobName: "lost", JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "QS1", SchedulingPriority: &prio}},
		Changes: []engine.JobChange{{Job: running, Terminate: true, Reason: "dropped with the cycle"}},
	})
	if engine.ErrorCode(err) != engine.Internal || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("the cycle's error: %v, want an internal error that names the panic", err)
	}
	if after := describeAll(t, e, running); after != before {
		t.Errorf("the panicked cycle changed the running job:\nbefore %s\nafter  %s", before, after)
	}
	if id := res.Jobs[0].JobID; id != "" {
		if _, err := e.DescribeServiceJob(ctx, id); engine.ErrorCode(err) != engine.NotFound {
			t.Errorf("the job submitted in the panicked cycle: %v, want it not to exist", err)
		}
	}
	if lost := named(t, e, "lost"); len(lost) > 0 {
		t.Errorf("the store holds %v, submitted in the panicked cycle", jobNames(lost))
	}
	if l := logs.String(); !strings.Contains(l, "panic in a scheduling cycle") || !strings.Contains(l, "panic_test.go") {
		t.Errorf("the log does not hold the panic and its stack:\n%s", l)
	}

	// The engine goes on: a new job is placed, and a restart finds what was
	// committed and nothing of the dropped cycle.
	h.submit("next", "QS2", 1)
	e, err = engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"running", "next"} {
		if js := named(t, e, name); len(js) != 1 || js[0].Status != engine.StatusScheduled {
			t.Errorf("after a restart, jobs named %s: %v, want one SCHEDULED", name, jobNames(js))
		}
	}
	if lost := named(t, e, "lost"); len(lost) > 0 {
		t.Errorf("after a restart, the store holds %v, submitted in the panicked cycle", jobNames(lost))
	}
}

// named lists the walkthrough queue's jobs of that name, from the store.
func named(t *testing.T, e *engine.Engine, name string) []record.Job {
	t.Helper()
	js, _, err := e.ListServiceJobs(context.Background(), engine.ListServiceJobsInput{JobQueue: "my-sm-training-qm-jq",
		Filters: []engine.JobFilter{{Name: "JOB_NAME", Values: []string{name}}}})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Ensure a running engine answers the requests of a panicked cycle with an
// internal error (a ServerException on the wire) and keeps serving.
func TestPanicInCycleKeepsServing(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	first := h.submit("first", "QS1", 1)
	if err := engine.PanicInCycle(context.Background(), h.e); engine.ErrorCode(err) != engine.Internal {
		t.Fatalf("a panicking request got %v, want an internal error", err)
	}
	second := h.submit("second", "QS2", 1)
	for _, id := range []string{first, second} {
		h.waitStatus(id, engine.StatusRunning)
	}
}

func describeAll(t *testing.T, e *engine.Engine, id string) string {
	t.Helper()
	j, err := e.DescribeServiceJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.JobName + " " + j.Status + " " + j.StatusReason
}

func jobNames(js []record.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.JobName+":"+j.Status)
	}
	return out
}
