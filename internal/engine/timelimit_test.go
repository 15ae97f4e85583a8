package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// syncStore opens a store in a temp dir and a fake clock for engines the test
// drives, as the simulator drives its own.
func syncStore(t *testing.T) (*sqlite.Store, *fakeClock) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, &fakeClock{t: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)}
}

// syncEngine starts an engine with opts, driven by the test over a new store
// and a fake clock, with the announcement's queue and shares.
func syncEngine(t *testing.T, opts engine.Options) (*harness, *sqlite.Store, *fakeClock) {
	t.Helper()
	st, clock := syncStore(t)
	d := engine.Driver{Clock: clock}
	if opts.Driver != nil {
		d.Sink = opts.Driver.Sink
	}
	opts.Store, opts.Driver = st, &d
	e, err := engine.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e: e}
	h.setupWalkthrough()
	return h, st, clock
}

// TestJobStateTimeLimitAction checks that a job stuck in RUNNABLE for a
// misconfiguration longer than the queue's maxTimeSeconds is terminated with
// AWS's statusReason, and that one waiting for another reason is not.
func TestJobStateTimeLimitAction(t *testing.T) {
	ctx := context.Background()
	h, _, clock := syncEngine(t, engine.Options{})
	e := h.e
	const reason = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
	if _, err := e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: "my-sm-training-qm-jq",
		JobStateTimeLimitActions: []record.JobStateTimeLimitAction{{Action: "TERMINATE", MaxTimeSeconds: 600, Reason: reason, State: "RUNNABLE"}}}); err != nil {
		t.Fatal(err)
	}
	submit := func(name, share string, count int) string {
		prio := 1
		j, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: name, JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", count, nil), QuotaShareName: share, SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	big := submit("too-big", "QS2", 2)   // can never run: QS2 lends and has a limit of 1
	submit("runs", "QS3", 1)             // QS3's own instance
	waiting := submit("waits", "QS3", 1) // waits for QS3's instance: not a misconfiguration

	status := func(id string) record.Job {
		j, err := e.DescribeServiceJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	clock.Add(599 * time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if j := status(big); j.Status != "RUNNABLE" {
		t.Fatalf("after 599 s the job is %s, want RUNNABLE", j.Status)
	}
	clock.Add(time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	j := status(big)
	if want := "Terminated by JobStateTimeLimit action due to reason: " + reason; j.Status != "FAILED" || j.StatusReason != want {
		t.Errorf("after 600 s: %s %q, want FAILED %q", j.Status, j.StatusReason, want)
	}
	clock.Add(time.Hour)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if j := status(waiting); j.Status != "RUNNABLE" {
		t.Errorf("a job waiting for capacity is %s, want RUNNABLE", j.Status)
	}
}
