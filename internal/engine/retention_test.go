package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
)

// TestRetention checks that ended jobs are forgotten, in memory and in the
// store, once the retention has passed, and live or recent ones are kept.
func TestRetention(t *testing.T) {
	ctx := context.Background()
	h, _, clock := syncEngine(t, engine.Options{Retention: time.Hour})
	e := h.e
	old := h.submit("old", "QS1", 1)
	if err := e.TerminateServiceJob(ctx, old, "done"); err != nil {
		t.Fatal(err)
	}
	clock.Add(30 * time.Minute)
	recent := h.submit("recent", "QS1", 1)
	if err := e.TerminateServiceJob(ctx, recent, "done"); err != nil {
		t.Fatal(err)
	}
	live := h.submit("live", "QS1", 1)
	clock.Add(45 * time.Minute)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DescribeServiceJob(ctx, old); engine.ErrorCode(err) != engine.NotFound {
		t.Errorf("a job ended 75 minutes ago: err %v, want not found", err)
	}
	for _, id := range []string{recent, live} {
		if _, err := e.DescribeServiceJob(ctx, id); err != nil {
			t.Errorf("job %s: %v", id, err)
		}
	}
	jobs, _, err := e.ListServiceJobs(ctx, engine.ListServiceJobsInput{JobStatus: "FAILED"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].JobID != recent {
		t.Errorf("FAILED jobs in the store: %d, want only the recent one", len(jobs))
	}
}
