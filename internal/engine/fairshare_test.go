package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// setupFair makes a fair-share queue fq on a service environment of two
// ml.g5.xlarge, where blue weighs 0.5 and the others 1.
func (h *harness) setupFair() {
	h.t.Helper()
	ctx := context.Background()
	p, err := h.e.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "fair",
		FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":3600,"computeReservation":0,"shareDistribution":[{"shareIdentifier":"blue","weightFactor":0.5}]}`)})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.e.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "fse", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 2}}}); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "fq", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "fse"}}, SchedulingPolicyArn: p.Arn}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) submitFair(name, share string, prio int) (string, error) {
	j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "fq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), ShareIdentifier: share, SchedulingPriority: &prio})
	return j.JobID, err
}

func (h *harness) mustSubmitFair(name, share string) string {
	h.t.Helper()
	id, err := h.submitFair(name, share, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// TestFairShareQueue: on a fair-share queue the identifiers share the
// capacity whatever the order of submission, a waiting job says how much
// its identifier used, shareIdentifier is required there and refused
// elsewhere, and the usage survives a restart, recomputed from the store.
func TestFairShareQueue(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupFair()
	if _, err := h.submitFair("none", "", 0); err == nil || !strings.Contains(err.Error(), "shareIdentifier must be specified: job queue fq has a fair share scheduling policy") {
		t.Errorf("submission without shareIdentifier: %v", err)
	}
	_, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "q", JobQueue: "fq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), ShareIdentifier: "red", QuotaShareName: "QS1"})
	if err == nil || !strings.Contains(err.Error(), "quotaShareName must not be specified") {
		t.Errorf("submission with quotaShareName: %v", err)
	}

	red1 := h.mustSubmitFair("red1", "red")
	h.waitStatus(red1, dispatched...)
	red2 := h.mustSubmitFair("red2", "red")
	h.waitStatus(red2, dispatched...)
	red3 := h.mustSubmitFair("red3", "red")
	blue1 := h.mustSubmitFair("blue1", "blue")
	blue2 := h.mustSubmitFair("blue2", "blue")
	// red holds both instances: blue's jobs, queued after red3, go first.
	if err := h.e.TerminateServiceJob(context.Background(), red1, "done"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(blue1, dispatched...)
	j := h.waitStatus(red3, "RUNNABLE")
	if !strings.Contains(j.StatusReason, "share identifier red has used") {
		t.Errorf("red3 waits for %q, want its identifier's usage named", j.StatusReason)
	}

	h.stop()
	h2 := startEngine(t, dir)
	h2.waitStatus(red2, dispatched...)
	h2.waitStatus(blue1, dispatched...)
	used := map[string]core.FairUsage{}
	for _, u := range engine.FairUsages(h2.e, "fq") {
		used[u.Share] = u
	}
	if used["red"].Usage <= 0 || used["blue"].Usage <= 0 || used["red"].Weight != 1 || used["blue"].Weight != 0.5 {
		t.Errorf("usage after a restart: %+v", used)
	}
	if err := h2.e.TerminateServiceJob(context.Background(), red2, "done"); err != nil {
		t.Fatal(err)
	}
	// red now holds nothing and has used next to nothing: its red3 goes
	// before blue's second job.
	h2.waitStatus(red3, dispatched...)
	h2.waitStatus(blue2, "RUNNABLE")

	// A replaced policy's weights apply at once; the usage stays.
	if err := h2.e.UpdateSchedulingPolicy(context.Background(), batchmodel.UpdateSchedulingPolicyInput{Arn: "arn:aws:batch:us-east-1:000000000000:scheduling-policy/fair",
		FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":3600,"shareDistribution":[{"shareIdentifier":"blue","weightFactor":2}]}`)}); err != nil {
		t.Fatal(err)
	}
	for _, u := range engine.FairUsages(h2.e, "fq") {
		if u.Share == "blue" && (u.Weight != 2 || u.Usage < used["blue"].Usage*0.5) {
			t.Errorf("blue after the policy changed: %+v (before: %+v)", u, used["blue"])
		}
	}
}

// TestShareIdentifierRefused: a queue without a fair-share policy refuses
// shareIdentifier, as AWS does.
func TestShareIdentifierRefused(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	_, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "x", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "QS1", ShareIdentifier: "red"})
	if err == nil || !strings.Contains(err.Error(), "shareIdentifier must not be specified: job queue my-sm-training-qm-jq does not have a fair share scheduling policy") {
		t.Errorf("shareIdentifier on a quota-share queue: %v", err)
	}
}

// TestFairShareEstimates: start estimates follow the fair-share order:
// blue's job, queued after red's third, is expected to start first, when
// red's first job reaches its maximum runtime.
func TestFairShareEstimates(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupFair()
	submit := func(name, share string, maxRuntime int) string {
		t.Helper()
		j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "fq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", 1, maxRuntime), ShareIdentifier: share})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	red1Start := h.waitStatus(submit("red1", "red", 600), engine.StatusRunning).StartedAt
	red2Start := h.waitStatus(submit("red2", "red", 1200), engine.StatusRunning).StartedAt
	red3 := submit("red3", "red", 600)
	blue1 := submit("blue1", "blue", 3600)
	for id, want := range map[string]forecast.Estimate{
		blue1: {Kind: forecast.Start, At: red1Start + 600_000, Basis: forecast.MaxRuntime},
		red3:  {Kind: forecast.Start, At: red2Start + 1200_000, Basis: forecast.MaxRuntime},
	} {
		var got forecast.Estimate
		testwait.True(t, 10*time.Second, "the estimate of "+id, func() bool {
			got, _ = h.e.LatestStartEstimate(id)
			return got == want
		})
	}
}

// TestFairShareQueueStoredBesideOthers: a queue with a fair-share policy
// stored sharing its service environment with another queue (as it could
// be before fair share was scheduled) still loads, and stays FIFO.
func TestFairShareQueueStoredBesideOthers(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupFair() // fq on fse
	ctx := context.Background()
	if _, err := h.e.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "other", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "plain", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "other"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "plain2", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "fse"}}}); err == nil {
		t.Fatal("a second queue was connected to a fair-share queue's service environment")
	}
	h.stop()

	// Move fq onto other's environment in the store, as an older release
	// allowed.
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Kind != "job-queue" || !strings.HasSuffix(r.ARN, "/fq") {
			continue
		}
		q, err := record.DecodeJobQueue(r.Doc)
		if err != nil {
			t.Fatal(err)
		}
		q.ServiceEnvironmentOrder[0].ServiceEnvironment = strings.Replace(q.ServiceEnvironmentOrder[0].ServiceEnvironment, "/fse", "/other", 1)
		r.Doc = record.Encode(q)
		if err := st.Commit(ctx, &store.Batch{Resources: []store.Resource{r}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	h2 := startEngine(t, dir)
	if _, err := h2.submitFair("tagged", "red", 0); err == nil || !strings.Contains(err.Error(), "shareIdentifier must not be specified") {
		t.Errorf("a share identifier on the queue kept FIFO: %v", err)
	}
	id, err := h2.submitFair("plain", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	h2.waitStatus(id, dispatched...)
}

// TestListByShareIdentifier: ListServiceJobs' SHARE_IDENTIFIER filter,
// with the status, lists a fair-share queue's jobs of that identifier, as
// the SDK's list_jobs_by_share asks; QUOTA_SHARE_NAME of the same name
// lists none of them.
func TestListByShareIdentifier(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupFair()
	h.waitStatus(h.mustSubmitFair("red1", "red"), dispatched...)
	h.waitStatus(h.mustSubmitFair("red2", "red"), dispatched...) // the two instances
	red3 := h.mustSubmitFair("red3", "red")
	h.mustSubmitFair("blue1", "blue")
	list := func(filter, value, status string) []string {
		t.Helper()
		js, _, err := h.e.ListServiceJobs(context.Background(), engine.ListServiceJobsInput{JobQueue: "fq", JobStatus: status,
			Filters: []engine.JobFilter{{Name: filter, Values: []string{value}}}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range js {
			names = append(names, j.JobName)
		}
		return names
	}
	h.waitStatus(red3, "RUNNABLE")
	if got := list("SHARE_IDENTIFIER", "red", "RUNNABLE"); strings.Join(got, " ") != "red3" {
		t.Errorf("red's RUNNABLE jobs: %v, want red3", got)
	}
	if got := list("SHARE_IDENTIFIER", "blue", "RUNNABLE"); strings.Join(got, " ") != "blue1" {
		t.Errorf("blue's RUNNABLE jobs: %v, want blue1", got)
	}
	if got := list("QUOTA_SHARE_NAME", "red", "RUNNABLE"); len(got) != 0 {
		t.Errorf("QUOTA_SHARE_NAME red lists %v on a fair-share queue", got)
	}
}
