package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// TestRestartWithDisabledQueueAndShare checks that jobs waiting in a
// DISABLED job queue, or in a DISABLED quota share, come back after a
// restart, still waiting and still refused new company, and run once
// enabled again.
func TestRestartWithDisabledQueueAndShare(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)}
	st := memstore.New()
	start := func() *harness {
		e, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clock}})
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		return &harness{t: t, e: e}
	}
	h := start()
	h.setupWalkthrough()
	h.submit("fill", "QS1", 1)
	fill := h.submit("fill", "QS2", 1)
	h.submit("fill", "QS3", 1)
	inShare := h.submit("waits-in-share", "QS1", 1)
	if _, err := h.e.UpdateQuotaShare(ctx, batchmodel.UpdateQuotaShareInput{
		QuotaShareArn: "arn:aws:batch:us-east-1:000000000000:job-queue/my-sm-training-qm-jq/quota-share/QS1", State: "DISABLED"}); err != nil {
		t.Fatal(err)
	}
	inQueue := h.submit("waits-in-queue", "QS2", 1)
	if _, err := h.e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: "my-sm-training-qm-jq", State: "DISABLED"}); err != nil {
		t.Fatal(err)
	}

	h = start()
	for _, id := range []string{inShare, inQueue} {
		if j := h.waitStatus(id, "RUNNABLE"); j.StatusReason == "" {
			t.Errorf("%s waits without a reason", j.JobName)
		}
	}
	prio := 1
	if _, err := h.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "late", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "QS2",
		SchedulingPriority: &prio}); engine.ErrorCode(err) != engine.Invalid {
		t.Errorf("submit to the DISABLED queue after a restart: %v", err)
	}
	if _, err := h.e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: "my-sm-training-qm-jq", State: "ENABLED"}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.TerminateServiceJob(ctx, fill, "make room"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(inQueue, dispatched...)
}
