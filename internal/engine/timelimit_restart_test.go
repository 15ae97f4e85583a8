package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// TestJobStateTimeLimitActionAcrossRestart checks that a restart does not
// reset how long a job has waited for a misconfiguration: 500 s before it
// and 100 s after make the 600 s of the queue's action.
func TestJobStateTimeLimitActionAcrossRestart(t *testing.T) {
	ctx := context.Background()
	st, clock := syncStore(t)
	open := func() *engine.Engine {
		t.Helper()
		e, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clock}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	h := &harness{t: t, e: e}
	h.setupWalkthrough()
	const reason = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
	if _, err := e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: "my-sm-training-qm-jq",
		JobStateTimeLimitActions: []record.JobStateTimeLimitAction{{Action: "TERMINATE", MaxTimeSeconds: 600, Reason: reason, State: "RUNNABLE"}}}); err != nil {
		t.Fatal(err)
	}
	prio := 1
	j, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "too-big", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 2, nil), QuotaShareName: "QS2", SchedulingPriority: &prio})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(500 * time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}

	e = open()
	if err := e.Tick(ctx); err != nil { // the first cycle after the restart
		t.Fatal(err)
	}
	clock.Add(100 * time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := e.DescribeServiceJob(ctx, j.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Terminated by JobStateTimeLimit action due to reason: " + reason; got.Status != "FAILED" || got.StatusReason != want {
		t.Errorf("600 s after submission, 100 s of them after a restart: %s %q, want FAILED %q", got.Status, got.StatusReason, want)
	}
}
