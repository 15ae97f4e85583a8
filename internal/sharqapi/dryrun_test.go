package sharqapi_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// Ensure a dry-run over HTTP predicts what the real submission then does,
// through the walkthrough: wait, reclaim, idle RESERVE capacity, in-share
// preemption, and a refused submission.
func TestDryRunMatchesSubmit(t *testing.T) {
	ctx := context.Background()
	clk := &fixedClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	eng, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clk},
		NewID: func() string { n++; return []string{"", "high", "med", "low", "qs2", "qs3", "top"}[n] }})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterconfig.Load("../../examples/announcement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterconfig.Apply(ctx, eng, cfg); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sharqapi.New(eng, sharqapi.Options{}))
	defer srv.Close()
	req := func(share string, prio int) batchapi.SubmitServiceJobRequest {
		return batchapi.SubmitServiceJobRequest{JobName: "j", JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: share,
			SchedulingPriority: &prio, ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`}
	}
	steps := []struct {
		share string
		prio  int
		want  string
	}{
		{"QS1", 3, "would be dispatched now on own capacity 1 × ml.g5.xlarge"},
		{"QS1", 2, "would be dispatched now borrowing 1 × ml.g5.xlarge"},
		{"QS1", 1, "would wait at position 1 of QS1: QS1 at its limit of 1 ml.g5.xlarge and nothing lendable: QS3's idle instance is RESERVE"},
		{"QS2", 1, "would be dispatched now on own capacity 1 × ml.g5.xlarge, preempting med (cross-share from QS1)"},
		{"QS3", 0, "would be dispatched now on own capacity 1 × ml.g5.xlarge"},
		{"QS1", 4, "would be dispatched now on own capacity 1 × ml.g5.xlarge, preempting high (in-share from QS1)"},
	}
	for i, st := range steps {
		clk.t = clk.t.Add(time.Second)
		before := statuses(t, eng)
		got, err := sharqapi.RequestDryRun(ctx, srv.Client(), srv.URL, req(st.share, st.prio))
		if err != nil {
			t.Fatalf("step %d: dry-run: %v", i, err)
		}
		if got.String() != st.want {
			t.Errorf("step %d: dry-run = %q, want %q", i, got, st.want)
		}
		if diff := cmp.Diff(before, statuses(t, eng)); diff != "" {
			t.Fatalf("step %d: the dry-run changed jobs (-before +after):\n%s", i, diff)
		}
		in, err := req(st.share, st.prio).Input()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		sj, err := eng.SubmitServiceJob(ctx, in)
		if err != nil {
			t.Fatalf("step %d: submit: %v", i, err)
		}
		checkOutcome(t, i, eng, sj.JobID, got, before)
	}
	_, err = sharqapi.RequestDryRun(ctx, srv.Client(), srv.URL, req("QS9", 1))
	if err == nil || err.Error() != "submission refused: Quota share QS9 does not exist in job queue my-sm-training-qm-jq" {
		t.Errorf("dry-run to a missing share: err = %v", err)
	}
}

func statuses(t *testing.T, eng *engine.Engine) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range []string{"high", "med", "low", "qs2", "qs3", "top"} {
		if j, err := eng.DescribeServiceJob(context.Background(), id); err == nil {
			out[id] = j.Status
		}
	}
	return out
}

// checkOutcome compares what the submission did with the dry-run's answer.
func checkOutcome(t *testing.T, step int, eng *engine.Engine, id string, dr sharqapi.DryRun, before map[string]string) {
	t.Helper()
	after := statuses(t, eng)
	if dispatched := after[id] == engine.StatusScheduled; dispatched != dr.Dispatched {
		t.Errorf("step %d: job %s is %s; the dry-run said dispatched=%v", step, id, after[id], dr.Dispatched)
	}
	var preempted []string
	for job, was := range before {
		if was == engine.StatusScheduled && after[job] == engine.StatusRunnable {
			preempted = append(preempted, job)
		}
	}
	var predicted []string
	for _, v := range dr.Preempts {
		predicted = append(predicted, v.JobID)
	}
	if diff := cmp.Diff(predicted, preempted); diff != "" {
		t.Errorf("step %d: preempted (-dry-run +real):\n%s", step, diff)
	}
	if !dr.Dispatched {
		pos, _ := eng.JobPosition(id)
		if pos.Reason.String() != dr.Reason || pos.Position+1 != dr.Position {
			t.Errorf("step %d: job waits at %d for %q; the dry-run said %d for %q", step, pos.Position+1, pos.Reason, dr.Position, dr.Reason)
		}
	}
}
