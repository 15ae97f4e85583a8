package engine_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// testdata/first-release.db was written by sharq's first release, through
// its engine: the announcement's queue and shares (examples/announcement.yaml),
// then "done" (QS1, clientToken token-done, SUCCEEDED), "cancelled" (QS2,
// terminated), "running" (QS1, priority 2, clientToken token-running,
// dispatched), "waiting" (QS3, dispatched on its one instance) and
// "waiting-too" (QS3, RUNNABLE behind it).
const (
	firstDone      = "01a2343f-087f-749b-8f1c-41722ea7bc20"
	firstCancelled = "01a2343f-0882-7407-98f9-000c247c53ce"
	firstRunning   = "01a2343f-0884-7330-b67b-472c6fe42105"
)

// openFirstRelease copies the first release's database and opens it with
// this one.
func openFirstRelease(t *testing.T, wrap func(store.Store) store.Store) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	src, err := os.Open("testdata/first-release.db")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatalf("open the first release's database: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	var s store.Store = st
	if wrap != nil {
		s = wrap(st)
	}
	e, err := engine.New(context.Background(), engine.Options{Store: s, Driver: &engine.Driver{}})
	if err != nil {
		t.Fatalf("start on the first release's database: %v", err)
	}
	return e
}

// Ensure a database written by the first release opens: its jobs, live and
// ended, are there, and a retried submission with the clientToken of a job
// that ended before the upgrade answers that job.
func TestOpenFirstReleaseDatabase(t *testing.T) {
	ctx := context.Background()
	e := openFirstRelease(t, nil)
	for id, want := range map[string]string{firstDone: "SUCCEEDED", firstCancelled: "FAILED", firstRunning: "SCHEDULED"} {
		j, err := e.DescribeServiceJob(ctx, id)
		if err != nil || j.Status != want {
			t.Errorf("job %s: %s (%v), want %s", id, j.Status, err, want)
		}
	}
	waiting, _, err := e.ListServiceJobs(ctx, engine.ListServiceJobsInput{JobQueue: "my-sm-training-qm-jq", JobStatus: "RUNNABLE"})
	if err != nil || len(waiting) != 1 || waiting[0].JobName != "waiting-too" {
		t.Errorf("RUNNABLE jobs: %v (%v), want waiting-too", jobNames(waiting), err)
	}

	prio := 1
	again := engine.SubmitServiceJobInput{JobName: "done", JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
		QuotaShareName: "QS1", SchedulingPriority: &prio, ClientToken: "token-done",
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`}
	j, err := e.SubmitServiceJob(ctx, again)
	if err != nil || j.JobID != firstDone {
		t.Errorf("retried submission of done: %s (%v), want the job it made, %s", j.JobID, err, firstDone)
	}
	again.JobName = "other"
	if _, err := e.SubmitServiceJob(ctx, again); engine.ErrorCode(err) != engine.Invalid {
		t.Errorf("another request with done's clientToken: %v, want it refused", err)
	}
	if err := e.TagResource(ctx, "arn:aws:batch:us-east-1:000000000000:service-job/"+firstDone, map[string]string{"k": "v"}); err != nil {
		t.Errorf("tag an ended job: %v", err)
	}
	if tags, err := e.ListTagsForResource(ctx, "arn:aws:batch:us-east-1:000000000000:service-job/"+firstDone); err != nil || tags["k"] != "v" {
		t.Errorf("tags of the ended job: %v (%v)", tags, err)
	}
}

// liveOnly is a store whose full job scan fails: a restart must not need it.
type liveOnly struct{ store.Store }

func (liveOnly) Jobs(context.Context, func(store.Job) error) error {
	return errors.New("a restart read every job")
}

// Ensure a restart reads only the live jobs; the ended ones are read when
// asked for.
func TestRestartReadsLiveJobsOnly(t *testing.T) {
	e := openFirstRelease(t, func(s store.Store) store.Store { return liveOnly{s} })
	if j, err := e.DescribeServiceJob(context.Background(), firstCancelled); err != nil || j.StatusReason != "no longer needed" {
		t.Errorf("the cancelled job, read on demand: %+v (%v)", j.StatusReason, err)
	}
}

// Ensure the clientToken of a job that ended before the restart is
// forgotten with the job once retention has passed: a submission with it
// then makes a new job.
func TestEndedTokenForgottenWithItsJob(t *testing.T) {
	ctx := context.Background()
	e := openFirstRelease(t, nil) // its jobs ended a month before the wall clock's today
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DescribeServiceJob(ctx, firstDone); engine.ErrorCode(err) != engine.NotFound {
		t.Fatalf("done, past retention: %v, want it forgotten", err)
	}
	prio := 1
	j, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "done", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: "QS1", SchedulingPriority: &prio, ClientToken: "token-done",
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`})
	if err != nil || j.JobID == firstDone {
		t.Errorf("a submission with the forgotten token: %s (%v), want a new job", j.JobID, err)
	}
}
