package engine_test

import (
	"context"
	"path"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
)

// Ensure a job is found by its attempt's name, live (by the engine's
// index) or ended and read back after a restart (from the store), even
// among jobs whose names begin alike beyond what an attempt name keeps.
func TestAttemptJob(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupWalkthrough()
	const long = "a-rather-long-training-job-name"
	ended := h.submit(long+"-1", "QS1", 1)
	live := h.submit(long+"-2", "QS2", 1)
	name := func(id string) string {
		j := h.waitStatus(id, dispatched...)
		return path.Base(j.LatestAttempt.ServiceResourceID.Value)
	}
	endedTJ, liveTJ := name(ended), name(live)
	if err := h.e.TerminateServiceJob(context.Background(), ended, "done"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(ended, "FAILED")
	h.stop()

	h = startEngine(t, dir)
	h.waitStatus(live, dispatched...)
	for tj, want := range map[string]string{endedTJ: ended, liveTJ: live} {
		j, err := h.e.AttemptJob(context.Background(), tj)
		if err != nil || j.JobID != want || !engine.HasAttempt(&j, tj) {
			t.Errorf("AttemptJob(%s) = job %s, %v; want %s", tj, j.JobID, err, want)
		}
	}
	for _, tj := range []string{"AWSBatch" + long[:23] + "00000000000000000000000000000000", "not-an-attempt", ""} {
		if _, err := h.e.AttemptJob(context.Background(), tj); engine.ErrorCode(err) != engine.NotFound {
			t.Errorf("AttemptJob(%q): %v, want NotFound", tj, err)
		}
	}
	jobs, err := h.e.AttemptJobs(context.Background())
	if err != nil || len(jobs) != 2 || jobs[0].JobID != live || jobs[1].JobID != ended {
		t.Errorf("AttemptJobs: %d jobs, %v; want %s then %s", len(jobs), err, live, ended)
	}
}
