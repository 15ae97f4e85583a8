package sim_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/sim"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// recorder is an executor that only remembers what it was asked to start.
type recorder struct{ started map[string]string } // job ID → attempt ID

func (r *recorder) Start(_ context.Context, a executor.Attempt) error {
	r.started[a.JobID] = a.ID
	return nil
}
func (r *recorder) Stop(context.Context, string, time.Duration) error   { return nil }
func (r *recorder) Updates() <-chan executor.Update                     { return nil }
func (r *recorder) Attempts(context.Context) ([]executor.Update, error) { return nil, nil }
func (r *recorder) Close() error                                        { return nil }

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// Ensure a server's history exports as the trace that would replay it,
// through the API and from the store alike: one job that ran 90 s, one
// still running (its runtime a guess), one cancelled while it waited, one
// that failed after 6 s (ended: its runtime is no guess).
func TestExport(t *testing.T) {
	ctx := context.Background()
	clk := &fixedClock{t: sim.Epoch}
	ids := []string{"done", "running", "cancelled", "failed"}
	n := 0
	rec := &recorder{started: map[string]string{}}
	st := memstore.New()
	eng, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clk}, Executor: rec,
		NewID: func() string { n++; return ids[n-1] }})
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterconfig.Apply(ctx, eng, mustConfig(t, "../../examples/announcement.yaml")); err != nil {
		t.Fatal(err)
	}
	submit := func(share string, prio, count int) {
		t.Helper()
		_, err := eng.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "n", JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
			QuotaShareName: share, SchedulingPriority: &prio,
			ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":` + string(rune('0'+count)) + `}}`})
		if err != nil {
			t.Fatal(err)
		}
	}
	deliver := func(job string, s executor.State) {
		t.Helper()
		if err := eng.Deliver(ctx, executor.Update{AttemptID: rec.started[job], JobID: job, State: s, At: clk.t}); err != nil {
			t.Fatal(err)
		}
	}
	submit("QS1", 5, 1)
	clk.t = clk.t.Add(10 * time.Second)
	deliver("done", executor.Running)
	submit("QS2", 1, 1)
	deliver("running", executor.Running)
	clk.t = clk.t.Add(20 * time.Second)
	submit("QS3", 2, 2) // more than QS3's limit: waits
	submit("QS3", 0, 1)
	deliver("failed", executor.Running)
	clk.t = clk.t.Add(6 * time.Second)
	deliver("failed", executor.Failed)
	clk.t = clk.t.Add(64 * time.Second)
	deliver("done", executor.Succeeded)
	if err := eng.TerminateServiceJob(ctx, "cancelled", "no longer needed"); err != nil {
		t.Fatal(err)
	}
	want := []sim.Job{
		{ID: "done", Name: "n", Queue: "my-sm-training-qm-jq", Share: "QS1", Priority: 5, InstanceType: "ml.g5.xlarge", Count: 1, Runtime: 90 * time.Second},
		{ID: "running", Name: "n", At: 10 * time.Second, Queue: "my-sm-training-qm-jq", Share: "QS2", Priority: 1, InstanceType: "ml.g5.xlarge", Count: 1, Runtime: sim.DefaultRuntime},
		{ID: "cancelled", Name: "n", At: 30 * time.Second, Queue: "my-sm-training-qm-jq", Share: "QS3", Priority: 2, InstanceType: "ml.g5.xlarge", Count: 2,
			Runtime: sim.DefaultRuntime, Changes: []sim.Change{{At: 100 * time.Second, Cancel: true}}},
		{ID: "failed", Name: "n", At: 30 * time.Second, Queue: "my-sm-training-qm-jq", Share: "QS3", Priority: 0, InstanceType: "ml.g5.xlarge", Count: 1, Runtime: 6 * time.Second},
	}
	srv := httptest.NewServer(batchapi.New(eng, batchapi.Options{}))
	defer srv.Close()
	fromAPI, err := sim.JobsFromServer(ctx, srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	fromStore, err := sim.JobsFromStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for name, jobs := range map[string][]batchapi.ServiceJob{"api": fromAPI, "store": fromStore} {
		w, guessed := sim.FromJobs(jobs)
		if diff := cmp.Diff(want, w.Jobs); diff != "" || guessed != 1 {
			t.Errorf("%s: %d guessed runtimes, want 1 (the running job's); jobs (-want +got):\n%s", name, guessed, diff)
		}
	}
}
