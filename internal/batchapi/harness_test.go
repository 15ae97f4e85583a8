package batchapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

const (
	testRegion  = "us-east-1"
	testAccount = "123456789012"
)

var testBase = arn.Base{Partition: "aws", Region: testRegion, AccountID: testAccount}

// serve starts h on a free loopback port for the test's lifetime.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newFakeServer serves the API in front of a fake engine. It is for what
// the real engine cannot show: the exact input an operation hands the
// engine, that a refused request never reaches it, and errors or panics
// on demand from every operation. The texts the engine words and the
// members of the records it makes are checked against the real engine
// (texts_test.go, engine_shapes_test.go), never against these fixtures.
func newFakeServer(t *testing.T) (*httptest.Server, *fakeEngine) {
	t.Helper()
	f := &fakeEngine{}
	return serve(t, newServer(f, testOptions(t))), f
}

func testOptions(t *testing.T) Options {
	return Options{Region: testRegion, AccountID: testAccount, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

// sdkClient is the AWS SDK for Go v2 Batch client, pointed at srv with
// static credentials and no retries (a retried 500 would hide the first).
func sdkClient(srv *httptest.Server) *batch.Client {
	return batch.New(batch.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   srv.Client(),
	})
}

// rawResponse is a response read in full.
type rawResponse struct {
	status int
	header http.Header
	body   string
}

// do sends a raw request, for what the SDK would refuse to send.
func do(t *testing.T, srv *httptest.Server, method, path, body string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{resp.StatusCode, resp.Header, string(b)}
}

// wantClientException checks that err is a ClientException, as the SDK
// decodes it, whose message contains want.
func wantClientException(t *testing.T, err error, want string) {
	t.Helper()
	var ce *types.ClientException
	if !errors.As(err, &ce) {
		t.Fatalf("got error %v (%T), want a ClientException containing %q", err, err, want)
	}
	if !strings.Contains(ce.ErrorMessage(), want) {
		t.Errorf("ClientException message %q does not contain %q", ce.ErrorMessage(), want)
	}
}

// fakeEngine answers every operation with fixed records and remembers the
// inputs it was given. The fixtures' texts (statusReason) are marked as the
// fixture's own, so that no test takes them for the engine's.
type fakeEngine struct {
	mu     sync.Mutex
	calls  []call
	err    error // when set, every operation fails with it
	panics bool  // when set, every operation panics
	// terminate, when set, is TerminateServiceJobs' answer.
	terminate func(ids []string) ([]string, []engine.TerminateError)
}

type call struct {
	op string
	in any
}

func (f *fakeEngine) record(op string, in any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{op, in})
	if f.panics {
		panic("fake engine: " + op)
	}
	return f.err
}

// last returns the only call made, failing unless there was exactly one.
func (f *fakeEngine) last(t *testing.T) call {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		t.Fatalf("engine got %d calls %v, want 1", len(f.calls), f.calls)
	}
	return f.calls[0]
}

func (f *fakeEngine) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

func (f *fakeEngine) called() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func tags() map[string]string { return map[string]string{"team": "vision"} }

func fixPolicy() record.SchedulingPolicy {
	return record.SchedulingPolicy{Arn: testBase.SchedulingPolicy("sp"), Name: "sp",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}, Tags: tags()}
}

func fixEnvironment() record.ServiceEnvironment {
	return record.ServiceEnvironment{ServiceEnvironmentName: "se", ServiceEnvironmentArn: testBase.ServiceEnvironment("se"),
		ServiceEnvironmentType: "SAGEMAKER_TRAINING", State: "ENABLED", Status: "VALID",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 4}}, Tags: tags()}
}

// fixQueue leaves the lists nil, as an engine might, to check the API
// sends them as empty lists.
func fixQueue() record.JobQueue {
	return record.JobQueue{JobQueueName: "HQ", JobQueueArn: testBase.JobQueue("HQ"), State: "ENABLED",
		SchedulingPolicyArn: testBase.SchedulingPolicy("sp"), Status: "VALID", StatusReason: "fixture: queue reason",
		Priority: 1, JobQueueType: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: testBase.ServiceEnvironment("se")}}}
}

func fixShare() record.QuotaShare {
	return record.QuotaShare{QuotaShareName: "QS1", QuotaShareArn: testBase.QuotaShare("HQ", "QS1"), JobQueueArn: testBase.JobQueue("HQ"),
		CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 2}},
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: aws.Int(200)},
		PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"},
		State:                        "ENABLED", Status: "VALID", Tags: tags()}
}

const jobID = "a4d6c728-1c8b-4d6e-9f55-2b0e0f6f1a11"

const trainingJobArn = "arn:aws:sagemaker:us-east-1:123456789012:training-job/AWSBatchtrain88b610a69aa8380ca5b0a7aba3f81cb8"

func fixJob() record.Job {
	return record.Job{JobID: jobID, JobName: "train", JobArn: testBase.ServiceJob(jobID), JobQueue: testBase.JobQueue("HQ"),
		ServiceJobType: "SAGEMAKER_TRAINING", Status: "RUNNING", StatusReason: "fixture: job reason",
		CreatedAt: 1774000000123, ScheduledAt: 1774000001000, StartedAt: 1774000002000,
		SchedulingPriority: 7, QuotaShareName: "QS1", ServiceRequestPayload: `{"TrainingJobName":"train"}`,
		RetryStrategy: &record.RetryStrategy{Attempts: 2, EvaluateOnExit: []record.EvaluateOnExit{{Action: "EXIT", OnStatusReason: "*"}}},
		TimeoutConfig: &record.TimeoutConfig{AttemptDurationSeconds: 86400}, Tags: tags(),
		CapacityUsage: []record.CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 2}},
		Attempts: []record.Attempt{{ServiceResourceID: record.ServiceResourceID{Name: "TrainingJobArn", Value: trainingJobArn},
			StartedAt: 1774000002000}},
		LatestAttempt:     &record.LatestAttempt{ServiceResourceID: record.ServiceResourceID{Name: "TrainingJobArn", Value: trainingJobArn}},
		PreemptionSummary: &record.PreemptionSummary{PreemptedAttemptCount: 0},
	}
}

func fixSnapshot() engine.QueueSnapshot {
	job := engine.FrontJob{JobArn: testBase.ServiceJob(jobID), CreatedAt: 1774000000500}
	return engine.QueueSnapshot{
		At: 1774000003000, Front: []engine.FrontJob{job},
		Quota: true, ShareFronts: map[string][]engine.FrontJob{"QS1": {job}, "QS2": nil},
		Total:  []record.CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 9}},
		Shares: []engine.ShareCapacity{{Share: "QS1", Usage: []record.CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 5}}}},
	}
}

func (f *fakeEngine) CreateSchedulingPolicy(_ context.Context, in batchmodel.CreateSchedulingPolicyInput) (record.SchedulingPolicy, error) {
	return fixPolicy(), f.record("CreateSchedulingPolicy", in)
}
func (f *fakeEngine) UpdateSchedulingPolicy(_ context.Context, in batchmodel.UpdateSchedulingPolicyInput) error {
	return f.record("UpdateSchedulingPolicy", in)
}
func (f *fakeEngine) DeleteSchedulingPolicy(_ context.Context, arn string) error {
	return f.record("DeleteSchedulingPolicy", arn)
}
func (f *fakeEngine) DescribeSchedulingPolicies(_ context.Context, arns []string) ([]record.SchedulingPolicy, error) {
	return []record.SchedulingPolicy{fixPolicy()}, f.record("DescribeSchedulingPolicies", arns)
}
func (f *fakeEngine) ListSchedulingPolicies(_ context.Context, p batchmodel.Page) ([]record.SchedulingPolicy, string, error) {
	return []record.SchedulingPolicy{fixPolicy()}, "next-1", f.record("ListSchedulingPolicies", p)
}
func (f *fakeEngine) CreateServiceEnvironment(_ context.Context, in batchmodel.CreateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	return fixEnvironment(), f.record("CreateServiceEnvironment", in)
}
func (f *fakeEngine) UpdateServiceEnvironment(_ context.Context, in batchmodel.UpdateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	return fixEnvironment(), f.record("UpdateServiceEnvironment", in)
}
func (f *fakeEngine) DeleteServiceEnvironment(_ context.Context, nameOrArn string) error {
	return f.record("DeleteServiceEnvironment", nameOrArn)
}
func (f *fakeEngine) DescribeServiceEnvironments(_ context.Context, names []string, p batchmodel.Page) ([]record.ServiceEnvironment, string, error) {
	return []record.ServiceEnvironment{fixEnvironment()}, "", f.record("DescribeServiceEnvironments", describeCall{names, p})
}
func (f *fakeEngine) CreateJobQueue(_ context.Context, in batchmodel.CreateJobQueueInput) (record.JobQueue, error) {
	return fixQueue(), f.record("CreateJobQueue", in)
}
func (f *fakeEngine) UpdateJobQueue(_ context.Context, in batchmodel.UpdateJobQueueInput) (record.JobQueue, error) {
	return fixQueue(), f.record("UpdateJobQueue", in)
}
func (f *fakeEngine) DeleteJobQueue(_ context.Context, nameOrArn string) error {
	return f.record("DeleteJobQueue", nameOrArn)
}
func (f *fakeEngine) DescribeJobQueues(_ context.Context, names []string, p batchmodel.Page) ([]record.JobQueue, string, error) {
	return []record.JobQueue{fixQueue()}, "", f.record("DescribeJobQueues", describeCall{names, p})
}
func (f *fakeEngine) CreateQuotaShare(_ context.Context, in batchmodel.CreateQuotaShareInput) (record.QuotaShare, error) {
	return fixShare(), f.record("CreateQuotaShare", in)
}
func (f *fakeEngine) UpdateQuotaShare(_ context.Context, in batchmodel.UpdateQuotaShareInput) (record.QuotaShare, error) {
	return fixShare(), f.record("UpdateQuotaShare", in)
}
func (f *fakeEngine) DeleteQuotaShare(_ context.Context, arn string) error {
	return f.record("DeleteQuotaShare", arn)
}
func (f *fakeEngine) DescribeQuotaShare(_ context.Context, arn string) (record.QuotaShare, error) {
	return fixShare(), f.record("DescribeQuotaShare", arn)
}
func (f *fakeEngine) ListQuotaShares(_ context.Context, jobQueue string, p batchmodel.Page) ([]record.QuotaShare, string, error) {
	return []record.QuotaShare{fixShare()}, "", f.record("ListQuotaShares", describeCall{[]string{jobQueue}, p})
}
func (f *fakeEngine) SubmitServiceJob(_ context.Context, in engine.SubmitServiceJobInput) (record.Job, error) {
	return fixJob(), f.record("SubmitServiceJob", in)
}
func (f *fakeEngine) UpdateServiceJob(_ context.Context, id string, priority int) (record.Job, error) {
	return fixJob(), f.record("UpdateServiceJob", updateJobCall{id, priority})
}
func (f *fakeEngine) TerminateServiceJob(_ context.Context, id, reason string) error {
	return f.record("TerminateServiceJob", []string{id, reason})
}
func (f *fakeEngine) TerminateServiceJobs(_ context.Context, ids []string, reason string) ([]string, []engine.TerminateError, error) {
	if err := f.record("TerminateServiceJobs", append(ids, reason)); err != nil {
		return nil, nil, err
	}
	if f.terminate != nil {
		ok, failed := f.terminate(ids)
		return ok, failed, nil
	}
	return ids, nil, nil
}
func (f *fakeEngine) DescribeServiceJob(_ context.Context, id string) (record.Job, error) {
	return fixJob(), f.record("DescribeServiceJob", id)
}
func (f *fakeEngine) ListServiceJobs(_ context.Context, in engine.ListServiceJobsInput) ([]record.Job, string, error) {
	return []record.Job{fixJob()}, "next-2", f.record("ListServiceJobs", in)
}
func (f *fakeEngine) GetJobQueueSnapshot(_ context.Context, jobQueue string) (engine.QueueSnapshot, error) {
	return fixSnapshot(), f.record("GetJobQueueSnapshot", jobQueue)
}
func (f *fakeEngine) TagResource(_ context.Context, arn string, tags map[string]string) error {
	return f.record("TagResource", tagCall{arn, tags, nil})
}
func (f *fakeEngine) UntagResource(_ context.Context, arn string, keys []string) error {
	return f.record("UntagResource", tagCall{arn, nil, keys})
}
func (f *fakeEngine) ListTagsForResource(_ context.Context, arn string) (map[string]string, error) {
	return tags(), f.record("ListTagsForResource", tagCall{arn, nil, nil})
}

type describeCall struct {
	names []string
	page  batchmodel.Page
}

type updateJobCall struct {
	id       string
	priority int
}

type tagCall struct {
	arn  string
	tags map[string]string
	keys []string
}
