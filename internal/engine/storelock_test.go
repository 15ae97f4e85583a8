package engine_test

import (
	"context"
	"maps"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/store"
)

// lockWatch is a store that counts the jobs read from it, and those read
// while the engine's lock was held: such a read would hold every cycle
// and every reader back while the store answers.
type lockWatch struct {
	store.Store
	e           *engine.Engine
	reads, held int
	heldCallers []string
	currentCall string
}

func (w *lockWatch) Job(ctx context.Context, id string) (store.Job, error) {
	w.reads++
	if w.e != nil && engine.LockHeld(w.e) {
		w.held++
		w.heldCallers = append(w.heldCallers, w.currentCall)
	}
	return w.Store.Job(ctx, id)
}

// Ensure the reads and changes of a job that ended before the engine
// started, which only the store holds, read it without holding the
// engine's lock, and find it as before.
func TestEndedJobReadOffTheLock(t *testing.T) {
	ctx := context.Background()
	h, st, clock := syncEngine(t, engine.Options{})
	prio := 1
	j, err := h.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "ended", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "QS1",
		SchedulingPriority: &prio, Tags: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.TerminateServiceJob(ctx, j.JobID, "done with it"); err != nil {
		t.Fatal(err)
	}

	w := &lockWatch{Store: st}
	e, err := engine.New(ctx, engine.Options{Store: w, Driver: &engine.Driver{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	w.e = e
	call := func(name string) { w.currentCall = name }

	call("DescribeServiceJob")
	if d, err := e.DescribeServiceJob(ctx, j.JobArn); err != nil || d.Status != engine.StatusFailed || d.StatusReason != "done with it" {
		t.Errorf("DescribeServiceJob: %s %q, %v; want FAILED, done with it", d.Status, d.StatusReason, err)
	}
	call("JobEvents")
	if evs, err := e.JobEvents(j.JobID); err != nil || len(evs) == 0 || evs[len(evs)-1].Job.Status != engine.StatusFailed {
		t.Errorf("JobEvents: %d events, %v; want them to end FAILED", len(evs), err)
	}
	call("ListTagsForResource")
	if tags, err := e.ListTagsForResource(ctx, j.JobArn); err != nil || !maps.Equal(tags, map[string]string{"team": "a"}) {
		t.Errorf("ListTagsForResource: %v, %v; want team=a", tags, err)
	}
	call("ListTagsForResource of no job")
	if _, err := e.ListTagsForResource(ctx, j.JobArn+"0"); engine.ErrorCode(err) != engine.NotFound {
		t.Errorf("ListTagsForResource of no job: %v, want not found", err)
	}
	call("UpdateServiceJob")
	if _, err := e.UpdateServiceJob(ctx, j.JobID, 5); engine.ErrorCode(err) != engine.Invalid {
		t.Errorf("UpdateServiceJob of an ended job: %v, want it refused", err)
	}
	call("TerminateServiceJob")
	if err := e.TerminateServiceJob(ctx, j.JobID, "again"); err != nil {
		t.Errorf("TerminateServiceJob of an ended job: %v", err)
	}
	call("TerminateServiceJobs")
	if ok, bad, err := e.TerminateServiceJobs(ctx, []string{j.JobID, "no-such-job"}, "again"); err != nil || len(ok) != 1 || len(bad) != 1 {
		t.Errorf("TerminateServiceJobs: ok %v, refused %v, %v; want the ended job ok and the other refused", ok, bad, err)
	}
	call("ApplyInstant")
	res, err := e.ApplyInstant(ctx, engine.Instant{Changes: []engine.JobChange{{Job: j.JobID, Priority: 3}}})
	if err != nil || engine.ErrorCode(res.ChangeErrs[0]) != engine.Invalid {
		t.Errorf("ApplyInstant of a priority change: %v, %v; want the change refused", res.ChangeErrs, err)
	}
	call("TagResource")
	if err := e.TagResource(ctx, j.JobArn, map[string]string{"cost": "b"}); err != nil {
		t.Fatal(err)
	}
	call("ListTagsForResource after tagging")
	if tags, err := e.ListTagsForResource(ctx, j.JobArn); err != nil || !maps.Equal(tags, map[string]string{"team": "a", "cost": "b"}) {
		t.Errorf("ListTagsForResource after tagging: %v, %v", tags, err)
	}
	if w.reads == 0 {
		t.Fatal("the store was never asked for the ended job")
	}
	if w.held > 0 {
		t.Errorf("%d of %d reads of a job from the store held the engine's lock: %v", w.held, w.reads, w.heldCallers)
	}
}
