package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/executortest"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// The texts below are what clients read in statusReason; they are checked
// here against the engine itself, and on the wire in batchapi's
// texts_test.go.

func TestQueueStatusReason(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	qs, _, err := h.e.DescribeJobQueues(context.Background(), nil, batchmodel.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].StatusReason != "JobQueue Healthy" {
		t.Fatalf("queues = %+v, want one with statusReason %q", qs, "JobQueue Healthy")
	}
}

// TestDeletedQueueFailsItsJobs: the jobs of a deleted queue with quota
// shares fail saying that the queue, not a share, was deleted.
func TestDeletedQueueFailsItsJobs(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	ctx := context.Background()
	running := h.submit("running", "QS1", 1)
	h.waitStatus(running, dispatched...)
	waiting := h.submit("waiting", "QS3", 1)
	if _, err := h.e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: "my-sm-training-qm-jq", State: "DISABLED"}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.DeleteJobQueue(ctx, "my-sm-training-qm-jq"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{running, waiting} {
		if j := h.waitStatus(id, "FAILED"); j.StatusReason != "Job queue deleted" {
			t.Errorf("job %s: statusReason %q, want %q", j.JobName, j.StatusReason, "Job queue deleted")
		}
	}
}

// TestAttemptEndWithoutReason: an attempt that the executor ends without a
// reason is said to have failed or stopped, in words.
func TestAttemptEndWithoutReason(t *testing.T) {
	h := startEngineWith(t, t.TempDir(), executortest.WithoutReasons, engine.Options{})
	h.setupWalkthrough()
	prio := 1
	j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "fails", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: "QS1", SchedulingPriority: &prio,
		ServiceRequestPayload: payload("ml.g5.xlarge", 1, map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "1", "SHARQ_SIMULATED_EXIT_CODE": "3"})})
	if err != nil {
		t.Fatal(err)
	}
	got := h.waitStatus(j.JobID, "FAILED")
	if got.StatusReason != "Attempt failed" {
		t.Errorf("statusReason %q, want %q", got.StatusReason, "Attempt failed")
	}
	if len(got.Attempts) != 1 || got.Attempts[0].StatusReason != "Attempt failed" {
		t.Errorf("attempts = %+v, want one that says %q", got.Attempts, "Attempt failed")
	}

	// Past its attempt duration the executor stops it.
	timedOut, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "stopped", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: "QS2", SchedulingPriority: &prio,
		TimeoutConfig: &record.TimeoutConfig{AttemptDurationSeconds: 1}, ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil)})
	if err != nil {
		t.Fatal(err)
	}
	got = h.waitStatus(timedOut.JobID, "FAILED")
	if len(got.Attempts) != 1 || got.Attempts[0].StatusReason != "Attempt stopped" {
		t.Errorf("attempts = %+v, want one that says %q", got.Attempts, "Attempt stopped")
	}
}

// TestStoredQueueReasonRepaired: a queue stored with the misspelt reason of
// earlier releases reads as AWS words it after a restart.
func TestStoredQueueReasonRepaired(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupWalkthrough()
	h.stop()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Resources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, r := range rs {
		if r.Kind == "job-queue" {
			r.Doc = []byte(strings.Replace(string(r.Doc), `"JobQueue Healthy"`, `"record.JobQueue Healthy"`, 1))
			b.Resources = append(b.Resources, r)
		}
	}
	if len(b.Resources) != 1 {
		t.Fatalf("%d queues stored, want 1", len(b.Resources))
	}
	if err := st.Commit(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	st.Close()
	h = startEngine(t, dir)
	qs, _, err := h.e.DescribeJobQueues(context.Background(), nil, batchmodel.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].StatusReason != "JobQueue Healthy" {
		t.Fatalf("queues = %+v, want one with statusReason %q", qs, "JobQueue Healthy")
	}
}
