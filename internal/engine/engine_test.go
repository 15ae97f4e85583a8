package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// harness runs a real engine over a SQLite store in a temp dir with the
// simulated executor.
type harness struct {
	t      *testing.T
	e      *engine.Engine
	dir    string
	cancel context.CancelFunc
	done   chan error
	st     *sqlite.Store
	ex     *simulated.Executor
}

func startEngine(t *testing.T, dir string) *harness {
	t.Helper()
	return startEngineWith(t, dir, nil, engine.Options{})
}

// startEngineWith runs an engine with opts over the simulated executor,
// seen through wrap when it is not nil.
func startEngineWith(t *testing.T, dir string, wrap func(executor.Executor) executor.Executor, opts engine.Options) *harness {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ex := simulated.New()
	opts.Store, opts.Executor = st, ex
	if wrap != nil {
		opts.Executor = wrap(ex)
	}
	e, err := engine.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, e: e, dir: dir, cancel: cancel, done: make(chan error, 1), st: st, ex: ex}
	go func() { h.done <- e.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("engine run: %v", err)
	}
	h.ex.Close()
	h.st.Close()
	h.cancel = nil
}

func ptr[T any](v T) *T { return &v }

func payload(instanceType string, count int, env map[string]string) string {
	b, _ := json.Marshal(map[string]any{
		"TrainingJobName": "t",
		"ResourceConfig":  map[string]any{"InstanceType": instanceType, "InstanceCount": count, "VolumeSizeInGB": 10},
		"Environment":     env,
	})
	return string(b)
}

func (h *harness) setupWalkthrough() {
	ctx := context.Background()
	h.t.Helper()
	must := func(err error) {
		h.t.Helper()
		if err != nil {
			h.t.Fatal(err)
		}
	}
	p, err := h.e.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "my-qm-scheduling-policy",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	must(err)
	_, err = h.e.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "my-sm-training-qm-se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 3}}})
	must(err)
	_, err = h.e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "my-sm-training-qm-jq", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "my-sm-training-qm-se"}}, SchedulingPolicyArn: p.Arn})
	must(err)
	for _, s := range []struct {
		name, strategy, inShare string
		borrow                  *int
	}{{"QS1", "LEND_AND_BORROW", "ENABLED", ptr(200)}, {"QS2", "LEND", "DISABLED", nil}, {"QS3", "RESERVE", "DISABLED", nil}} {
		_, err = h.e.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{Name: s.name, JobQueue: "my-sm-training-qm-jq",
			CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: s.strategy, BorrowLimit: s.borrow},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: s.inShare}})
		must(err)
	}
}

func (h *harness) submit(name, share string, prio int) string {
	h.t.Helper()
	j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: share, SchedulingPriority: &prio})
	if err != nil {
		h.t.Fatal(err)
	}
	return j.JobID
}

// waitStatus polls until the job has one of the statuses.
func (h *harness) waitStatus(id string, statuses ...string) record.Job {
	h.t.Helper()
	var j record.Job
	testwait.Until(h.t, 10*time.Second, func() error {
		var err error
		if j, err = h.e.DescribeServiceJob(context.Background(), id); err != nil {
			h.t.Fatal(err)
		}
		if !slices.Contains(statuses, j.Status) {
			return fmt.Errorf("job %s is %s (%s), want %v", j.JobName, j.Status, j.StatusReason, statuses)
		}
		return nil
	})
	return j
}

var dispatched = []string{"SCHEDULED", "STARTING", "RUNNING"}

func TestWalkthrough(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	high := h.submit("qs1_job_high", "QS1", 3)
	med := h.submit("qs1_job_med", "QS1", 2)
	low := h.submit("qs1_job_low", "QS1", 1)
	h.waitStatus(high, dispatched...)
	h.waitStatus(med, dispatched...)
	h.waitStatus(low, "RUNNABLE")

	qs2 := h.submit("qs2_job_1", "QS2", 1)
	h.waitStatus(qs2, "RUNNING") // it starts once med's processes are gone
	m := h.waitStatus(med, "RUNNABLE")
	if m.PreemptionSummary == nil || m.PreemptionSummary.PreemptedAttemptCount != 1 || len(m.PreemptionSummary.RecentPreemptedAttempts) != 1 {
		t.Fatalf("med preemption summary = %+v", m.PreemptionSummary)
	}
	if got, want := m.PreemptionSummary.RecentPreemptedAttempts[0].StatusReason, "Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job "+qs2+")"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}

	if _, err := h.e.UpdateServiceJob(context.Background(), "arn:aws:batch:us-east-1:000000000000:service-job/"+low, 4); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(low, dispatched...)
	hi := h.waitStatus(high, "RUNNABLE")
	if hi.PreemptionSummary.PreemptedAttemptCount != 1 {
		t.Errorf("high preempted %d times", hi.PreemptionSummary.PreemptedAttemptCount)
	}
	h.waitStatus(qs2, dispatched...)
	snap, err := h.e.GetJobQueueSnapshot(context.Background(), "my-sm-training-qm-jq")
	if err != nil {
		t.Fatal(err)
	}
	if f := snap.ShareFronts["QS1"]; len(f) != 1 || f[0].JobArn != hi.JobArn {
		t.Errorf("front of QS1 = %+v, want %s", f, hi.JobArn)
	}
}

// TestRestart checks that a restarted engine has every acknowledged job and
// dispatches none twice.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupWalkthrough()
	a := h.submit("a", "QS1", 3)
	b := h.submit("b", "QS1", 2)
	c := h.submit("c", "QS1", 1)
	h.waitStatus(a, dispatched...)
	h.waitStatus(b, dispatched...)
	h.stop()

	h2 := startEngine(t, dir)
	h2.waitStatus(a, dispatched...)
	h2.waitStatus(b, dispatched...)
	h2.waitStatus(c, "RUNNABLE")
	if err := h2.e.TerminateServiceJob(context.Background(), a, "done"); err != nil {
		t.Fatal(err)
	}
	h2.waitStatus(c, dispatched...)
	j := h2.waitStatus(a, "FAILED")
	if !j.IsTerminated || j.StatusReason != "done" {
		t.Errorf("terminated job: %+v", j)
	}
}
