package batchapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// successCalls sends every operation the SDK has, with valid input.
func successCalls() map[string]func(context.Context, *batch.Client) error {
	return map[string]func(context.Context, *batch.Client) error{
		"CreateSchedulingPolicy":      sdkCall((*batch.Client).CreateSchedulingPolicy, goodCreatePolicy, nop),
		"UpdateSchedulingPolicy":      sdkCall((*batch.Client).UpdateSchedulingPolicy, goodUpdatePolicy, nop),
		"DeleteSchedulingPolicy":      sdkCall((*batch.Client).DeleteSchedulingPolicy, goodDeletePolicy, nop),
		"DescribeSchedulingPolicies":  sdkCall((*batch.Client).DescribeSchedulingPolicies, goodDescribePolicies, nop),
		"ListSchedulingPolicies":      sdkCall((*batch.Client).ListSchedulingPolicies, goodListPolicies, nop),
		"CreateServiceEnvironment":    sdkCall((*batch.Client).CreateServiceEnvironment, goodCreateEnvironment, nop),
		"UpdateServiceEnvironment":    sdkCall((*batch.Client).UpdateServiceEnvironment, goodUpdateEnvironment, nop),
		"DeleteServiceEnvironment":    sdkCall((*batch.Client).DeleteServiceEnvironment, goodDeleteEnvironment, nop),
		"DescribeServiceEnvironments": sdkCall((*batch.Client).DescribeServiceEnvironments, goodDescribeEnvironments, nop),
		"CreateJobQueue":              sdkCall((*batch.Client).CreateJobQueue, goodCreateQueue, nop),
		"UpdateJobQueue":              sdkCall((*batch.Client).UpdateJobQueue, goodUpdateQueue, nop),
		"DeleteJobQueue":              sdkCall((*batch.Client).DeleteJobQueue, goodDeleteQueue, nop),
		"DescribeJobQueues":           sdkCall((*batch.Client).DescribeJobQueues, goodDescribeQueues, nop),
		"CreateQuotaShare":            sdkCall((*batch.Client).CreateQuotaShare, goodCreateShare, nop),
		"UpdateQuotaShare":            sdkCall((*batch.Client).UpdateQuotaShare, goodUpdateShare, nop),
		"DeleteQuotaShare":            sdkCall((*batch.Client).DeleteQuotaShare, goodDeleteShare, nop),
		"DescribeQuotaShare":          sdkCall((*batch.Client).DescribeQuotaShare, goodDescribeShare, nop),
		"ListQuotaShares":             sdkCall((*batch.Client).ListQuotaShares, goodListShares, nop),
		"SubmitServiceJob":            sdkCall((*batch.Client).SubmitServiceJob, goodSubmit, nop),
		"UpdateServiceJob":            sdkCall((*batch.Client).UpdateServiceJob, goodUpdateJob, nop),
		"TerminateServiceJob":         sdkCall((*batch.Client).TerminateServiceJob, goodTerminateJob, nop),
		"DescribeServiceJob":          sdkCall((*batch.Client).DescribeServiceJob, goodDescribeJob, nop),
		"ListServiceJobs":             sdkCall((*batch.Client).ListServiceJobs, goodListJobs, nop),
		"GetJobQueueSnapshot":         sdkCall((*batch.Client).GetJobQueueSnapshot, goodSnapshot, nop),
		"TagResource":                 sdkCall((*batch.Client).TagResource, goodTag, nop),
		"UntagResource":               sdkCall((*batch.Client).UntagResource, goodUntag, nop),
		"ListTagsForResource":         sdkCall((*batch.Client).ListTagsForResource, goodListTags, nop),
	}
}

func nop[T any](*T) {}

// wantEngineGot checks the one call the engine got.
func wantEngineGot(t *testing.T, f *fakeEngine, op string, want any) {
	t.Helper()
	c := f.last(t)
	if c.op != op {
		t.Fatalf("engine got %s, want %s", c.op, op)
	}
	if diff := cmp.Diff(want, c.in, cmp.AllowUnexported(describeCall{}, updateJobCall{}, tagCall{})); diff != "" {
		t.Errorf("%s input (-want +got):\n%s", op, diff)
	}
	f.reset()
}

// Ensure every operation answers valid input with 200 through the SDK.
func TestEveryOperationSucceeds(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	for name, call := range successCalls() {
		t.Run(name, func(t *testing.T) {
			if err := call(t.Context(), client); err != nil {
				t.Fatal(err)
			}
		})
	}
	if got, want := fake.called(), len(successCalls()); got != want {
		t.Errorf("engine got %d calls, want %d", got, want)
	}
}

// Ensure the operations answered with an empty body send 200 and
// Content-Length: 0, as AWS does.
func TestEmptyOutputs(t *testing.T) {
	srv, _ := newFakeServer(t)
	qs := testBase.QuotaShare("HQ", "QS1")
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/v1/updateschedulingpolicy", `{"arn":"` + testBase.SchedulingPolicy("sp") + `"}`},
		{"POST", "/v1/deleteschedulingpolicy", `{"arn":"` + testBase.SchedulingPolicy("sp") + `"}`},
		{"POST", "/v1/deleteserviceenvironment", `{"serviceEnvironment":"se"}`},
		{"POST", "/v1/deletejobqueue", `{"jobQueue":"HQ"}`},
		{"POST", "/v1/deletequotashare", `{"quotaShareArn":"` + qs + `"}`},
		{"POST", "/v1/terminateservicejob", `{"jobId":"` + jobID + `","reason":"r"}`},
		{"POST", "/v1/tags/" + strings.ReplaceAll(qs, "/", "%2F"), `{"tags":{"a":"b"}}`},
		{"DELETE", "/v1/tags/" + strings.ReplaceAll(qs, "/", "%2F") + "?tagKeys=a&tagKeys=b", ``},
	} {
		r := do(t, srv, tt.method, tt.path, tt.body)
		if r.status != 200 || r.body != "" || r.header.Get("Content-Length") != "0" {
			t.Errorf("%s %s: %d, Content-Length %q, body %q", tt.method, tt.path, r.status, r.header.Get("Content-Length"), r.body)
		}
	}
}

func TestSchedulingPolicyShapes(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	ctx := t.Context()

	out, err := client.CreateSchedulingPolicy(ctx, goodCreatePolicy())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Arn) != testBase.SchedulingPolicy("sp") || aws.ToString(out.Name) != "sp" {
		t.Errorf("CreateSchedulingPolicy = %s %s", aws.ToString(out.Arn), aws.ToString(out.Name))
	}
	wantEngineGot(t, fake, "CreateSchedulingPolicy", batchmodel.CreateSchedulingPolicyInput{Name: "sp",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}, Tags: tags()})

	// A fair-share policy reaches the engine as compact JSON of the
	// members AWS defines.
	r := do(t, srv, "POST", "/v1/createschedulingpolicy", `{"name":"fs","fairsharePolicy":{"shareDecaySeconds":3600,"computeReservation":10,`+
		`"shareDistribution":[{"shareIdentifier":"blue*","weightFactor":0.5,"extra":1}],"future":true}}`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	wantEngineGot(t, fake, "CreateSchedulingPolicy", batchmodel.CreateSchedulingPolicyInput{Name: "fs",
		FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":3600,"computeReservation":10,"shareDistribution":[{"shareIdentifier":"blue*","weightFactor":0.5}]}`)})

	if _, err := client.UpdateSchedulingPolicy(ctx, goodUpdatePolicy()); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "UpdateSchedulingPolicy", batchmodel.UpdateSchedulingPolicyInput{Arn: testBase.SchedulingPolicy("sp"),
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})

	desc, err := client.DescribeSchedulingPolicies(ctx, goodDescribePolicies())
	if err != nil {
		t.Fatal(err)
	}
	want := []types.SchedulingPolicyDetail{{Arn: aws.String(testBase.SchedulingPolicy("sp")), Name: aws.String("sp"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}, Tags: tags()}}
	if diff := cmp.Diff(want, desc.SchedulingPolicies, ignoreSDKInternals); diff != "" {
		t.Errorf("DescribeSchedulingPolicies (-want +got):\n%s", diff)
	}
	fake.reset()

	// A listing item holds the ARN only.
	r = do(t, srv, "POST", "/v1/listschedulingpolicies", `{"maxResults":10,"nextToken":"t"}`)
	if want := `{"schedulingPolicies":[{"arn":"` + testBase.SchedulingPolicy("sp") + `"}],"nextToken":"next-1"}`; r.body != want {
		t.Errorf("ListSchedulingPolicies body\n got %s\nwant %s", r.body, want)
	}
	wantEngineGot(t, fake, "ListSchedulingPolicies", batchmodel.Page{MaxResults: 10, NextToken: "t"})
}

func TestServiceEnvironmentShapes(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	ctx := t.Context()

	out, err := client.CreateServiceEnvironment(ctx, goodCreateEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.ServiceEnvironmentArn) != testBase.ServiceEnvironment("se") || aws.ToString(out.ServiceEnvironmentName) != "se" {
		t.Errorf("CreateServiceEnvironment = %+v", out)
	}
	wantEngineGot(t, fake, "CreateServiceEnvironment", batchmodel.CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 4}}, State: "ENABLED", Tags: tags()})

	up, err := client.UpdateServiceEnvironment(ctx, goodUpdateEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(up.ServiceEnvironmentArn) != testBase.ServiceEnvironment("se") {
		t.Errorf("UpdateServiceEnvironment = %+v", up)
	}
	wantEngineGot(t, fake, "UpdateServiceEnvironment", batchmodel.UpdateServiceEnvironmentInput{ServiceEnvironment: "se", State: "DISABLED"})

	desc, err := client.DescribeServiceEnvironments(ctx, goodDescribeEnvironments())
	if err != nil {
		t.Fatal(err)
	}
	want := []types.ServiceEnvironmentDetail{{ServiceEnvironmentName: aws.String("se"), ServiceEnvironmentArn: aws.String(testBase.ServiceEnvironment("se")),
		ServiceEnvironmentType: "SAGEMAKER_TRAINING", State: "ENABLED", Status: "VALID",
		CapacityLimits: []types.CapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(4)}}, Tags: tags()}}
	if diff := cmp.Diff(want, desc.ServiceEnvironments, ignoreSDKInternals); diff != "" {
		t.Errorf("DescribeServiceEnvironments (-want +got):\n%s", diff)
	}
	if desc.NextToken != nil {
		t.Errorf("nextToken = %q, want absent", *desc.NextToken)
	}
	wantEngineGot(t, fake, "DescribeServiceEnvironments", describeCall{names: []string{"se"}})
}

func TestJobQueueShapes(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	ctx := t.Context()

	out, err := client.CreateJobQueue(ctx, goodCreateQueue())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.JobQueueArn) != testBase.JobQueue("HQ") || aws.ToString(out.JobQueueName) != "HQ" {
		t.Errorf("CreateJobQueue = %+v", out)
	}
	wantEngineGot(t, fake, "CreateJobQueue", batchmodel.CreateJobQueueInput{Name: "HQ", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se"}},
		SchedulingPolicyArn:     testBase.SchedulingPolicy("sp"), State: "ENABLED",
		JobStateTimeLimitActions: []record.JobStateTimeLimitAction{{Action: "TERMINATE", MaxTimeSeconds: 600,
			Reason: "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", State: "RUNNABLE"}},
		ComputeEnvironmentOrder: []json.RawMessage{}, Tags: tags()})

	// Absent members stay unchanged (nil); empty lists reach the engine
	// as empty, meaning "detach" and "clear".
	if _, err := client.UpdateJobQueue(ctx, goodUpdateQueue()); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "UpdateJobQueue", batchmodel.UpdateJobQueueInput{JobQueue: "HQ", State: "DISABLED"})
	r := do(t, srv, "POST", "/v1/updatejobqueue", `{"jobQueue":"HQ","priority":0,"serviceEnvironmentOrder":[],"jobStateTimeLimitActions":[]}`)
	if r.status != 200 || r.body != `{"jobQueueArn":"`+testBase.JobQueue("HQ")+`","jobQueueName":"HQ"}` {
		t.Errorf("UpdateJobQueue: %d %s", r.status, r.body)
	}
	wantEngineGot(t, fake, "UpdateJobQueue", batchmodel.UpdateJobQueueInput{JobQueue: "HQ", Priority: aws.Int(0),
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{}, JobStateTimeLimitActions: []record.JobStateTimeLimitAction{}})

	desc, err := client.DescribeJobQueues(ctx, goodDescribeQueues())
	if err != nil {
		t.Fatal(err)
	}
	if len(desc.JobQueues) != 1 || aws.ToString(desc.JobQueues[0].ServiceEnvironmentOrder[0].ServiceEnvironment) != testBase.ServiceEnvironment("se") {
		t.Errorf("DescribeJobQueues = %+v", desc.JobQueues)
	}
	wantEngineGot(t, fake, "DescribeJobQueues", describeCall{names: []string{"HQ"}, page: batchmodel.Page{MaxResults: 100}})

	// The lists and map AWS always sends are [] and {}, never null.
	r = do(t, srv, "POST", "/v1/describejobqueues", ``)
	for _, want := range []string{`"computeEnvironmentOrder":[]`, `"jobStateTimeLimitActions":[]`, `"tags":{}`, `"statusReason":"fixture: queue reason"`, `"priority":1`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("DescribeJobQueues body lacks %s: %s", want, r.body)
		}
	}
	if strings.Contains(r.body, "nextToken") {
		t.Errorf("DescribeJobQueues body has a nextToken: %s", r.body)
	}
}

func TestQuotaShareShapes(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	ctx := t.Context()
	qsArn := testBase.QuotaShare("HQ", "QS1")

	out, err := client.CreateQuotaShare(ctx, goodCreateShare())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.QuotaShareArn) != qsArn || aws.ToString(out.QuotaShareName) != "QS1" {
		t.Errorf("CreateQuotaShare = %+v", out)
	}
	wantEngineGot(t, fake, "CreateQuotaShare", batchmodel.CreateQuotaShareInput{Name: "QS1", JobQueue: "HQ",
		CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 2}},
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: aws.Int(200)},
		PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"},
		State:                        "ENABLED", Tags: tags()})

	if _, err := client.UpdateQuotaShare(ctx, goodUpdateShare()); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "UpdateQuotaShare", batchmodel.UpdateQuotaShareInput{QuotaShareArn: qsArn, State: "DISABLED"})
	if _, err := client.UpdateQuotaShare(ctx, &batch.UpdateQuotaShareInput{QuotaShareArn: aws.String(qsArn),
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: "RESERVE"},
		PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}}); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "UpdateQuotaShare", batchmodel.UpdateQuotaShareInput{QuotaShareArn: qsArn,
		ResourceSharingConfiguration: &record.ResourceSharingConfiguration{Strategy: "RESERVE"},
		PreemptionConfiguration:      &record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}})

	desc, err := client.DescribeQuotaShare(ctx, goodDescribeShare())
	if err != nil {
		t.Fatal(err)
	}
	want := &batch.DescribeQuotaShareOutput{QuotaShareName: aws.String("QS1"), QuotaShareArn: aws.String(qsArn), JobQueueArn: aws.String(testBase.JobQueue("HQ")),
		CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(2)}},
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: aws.Int32(200)},
		PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"},
		State:                        "ENABLED", Status: "VALID", Tags: tags()}
	if diff := cmp.Diff(want, desc, ignoreSDKInternals); diff != "" {
		t.Errorf("DescribeQuotaShare (-want +got):\n%s", diff)
	}
	wantEngineGot(t, fake, "DescribeQuotaShare", qsArn)

	// QuotaShareDetail has no tags.
	r := do(t, srv, "POST", "/v1/listquotashares", `{"jobQueue":"HQ","maxResults":1}`)
	if r.status != 200 || strings.Contains(r.body, "tags") || !strings.Contains(r.body, `"borrowLimit":200`) {
		t.Errorf("ListQuotaShares: %d %s", r.status, r.body)
	}
	wantEngineGot(t, fake, "ListQuotaShares", describeCall{names: []string{"HQ"}, page: batchmodel.Page{MaxResults: 1}})
}

func TestServiceJobShapes(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	ctx := t.Context()
	jobArn := testBase.ServiceJob(jobID)

	sub, err := client.SubmitServiceJob(ctx, goodSubmit())
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(sub.JobArn) != jobArn || aws.ToString(sub.JobId) != jobID || aws.ToString(sub.JobName) != "train" {
		t.Errorf("SubmitServiceJob = %+v", sub)
	}
	got := fake.last(t).in.(engine.SubmitServiceJobInput)
	if !uuidRE.MatchString(got.ClientToken) {
		t.Errorf("clientToken %q: the SDK's idempotency token did not reach the engine", got.ClientToken)
	}
	in := goodSubmit()
	wantEngineGot(t, fake, "SubmitServiceJob", engine.SubmitServiceJobInput{JobName: "train", JobQueue: "HQ",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: *in.ServiceRequestPayload, ClientToken: got.ClientToken,
		QuotaShareName: "QS1", SchedulingPriority: aws.Int(5),
		PreemptionConfiguration: &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: aws.Int(3)},
		RetryStrategy: &record.RetryStrategy{Attempts: 2, EvaluateOnExit: []record.EvaluateOnExit{
			{Action: "RETRY", OnStatusReason: "Received status from SageMaker:InternalServerError*"}, {Action: "EXIT", OnStatusReason: "*"}}},
		TimeoutConfig: &record.TimeoutConfig{AttemptDurationSeconds: 86400}, Tags: tags()})

	// PySDK passes the job ARN as jobId; the engine gets the ID. An ARN
	// of another account goes through as it is, to be found by nobody.
	desc, err := client.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(jobArn)})
	if err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "DescribeServiceJob", jobID)
	foreign := "arn:aws:batch:us-east-1:999999999999:service-job/" + jobID
	if _, err := client.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(foreign)}); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "DescribeServiceJob", foreign)
	wantDescribe := &batch.DescribeServiceJobOutput{JobId: aws.String(jobID), JobName: aws.String("train"), JobArn: aws.String(jobArn),
		JobQueue: aws.String(testBase.JobQueue("HQ")), ServiceJobType: "SAGEMAKER_TRAINING", Status: "RUNNING", StatusReason: aws.String("fixture: job reason"),
		CreatedAt: aws.Int64(1774000000123), ScheduledAt: aws.Int64(1774000001000), StartedAt: aws.Int64(1774000002000),
		SchedulingPriority: aws.Int32(7), QuotaShareName: aws.String("QS1"), ServiceRequestPayload: aws.String(`{"TrainingJobName":"train"}`),
		RetryStrategy: &types.ServiceJobRetryStrategy{Attempts: aws.Int32(2), EvaluateOnExit: []types.ServiceJobEvaluateOnExit{{Action: "EXIT", OnStatusReason: aws.String("*")}}},
		TimeoutConfig: &types.ServiceJobTimeout{AttemptDurationSeconds: aws.Int32(86400)}, Tags: tags(),
		CapacityUsage: []types.ServiceJobCapacityUsageDetail{{CapacityUnit: aws.String("ml.g5.xlarge"), Quantity: aws.Float64(2)}},
		Attempts: []types.ServiceJobAttemptDetail{{ServiceResourceId: &types.ServiceResourceId{Name: "TrainingJobArn", Value: aws.String(trainingJobArn)},
			StartedAt: aws.Int64(1774000002000)}},
		LatestAttempt:     &types.LatestServiceJobAttempt{ServiceResourceId: &types.ServiceResourceId{Name: "TrainingJobArn", Value: aws.String(trainingJobArn)}},
		PreemptionSummary: &types.ServiceJobPreemptionSummary{PreemptedAttemptCount: aws.Int32(0), RecentPreemptedAttempts: []types.ServiceJobPreemptedAttempt{}},
	}
	if diff := cmp.Diff(wantDescribe, desc, ignoreSDKInternals); diff != "" {
		t.Errorf("DescribeServiceJob (-want +got):\n%s", diff)
	}

	up, err := client.UpdateServiceJob(ctx, &batch.UpdateServiceJobInput{JobId: aws.String(jobArn), SchedulingPriority: aws.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(up.JobArn) != jobArn || aws.ToString(up.JobId) != jobID || aws.ToString(up.JobName) != "train" {
		t.Errorf("UpdateServiceJob = %+v", up)
	}
	wantEngineGot(t, fake, "UpdateServiceJob", updateJobCall{jobID, 0})

	if _, err := client.TerminateServiceJob(ctx, &batch.TerminateServiceJobInput{JobId: aws.String(jobArn), Reason: aws.String("stop")}); err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "TerminateServiceJob", []string{jobID, "stop"})

	list, err := client.ListServiceJobs(ctx, goodListJobs())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.JobSummaryList) != 1 || aws.ToInt64(list.JobSummaryList[0].CreatedAt) != 1774000000123 || aws.ToString(list.NextToken) != "next-2" {
		t.Errorf("ListServiceJobs = %+v", list)
	}
	wantEngineGot(t, fake, "ListServiceJobs", engine.ListServiceJobsInput{JobQueue: "HQ", JobStatus: "RUNNING",
		Filters: []engine.JobFilter{{Name: "QUOTA_SHARE_NAME", Values: []string{"QS1"}}}})

	// A summary has exactly ServiceJobSummary's members.
	r := do(t, srv, "POST", "/v1/listservicejobs", `{"jobQueue":"HQ","filters":[{"name":"JOB_NAME","values":["tr*"]}]}`)
	var body struct{ JobSummaryList []map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || len(body.JobSummaryList) != 1 {
		t.Fatalf("ListServiceJobs body %s: %v", r.body, err)
	}
	var keys []string
	for k := range body.JobSummaryList[0] {
		keys = append(keys, k)
	}
	wantKeys := []string{"capacityUsage", "createdAt", "jobArn", "jobId", "jobName", "latestAttempt", "quotaShareName",
		"scheduledAt", "serviceJobType", "startedAt", "status", "statusReason"}
	if diff := cmp.Diff(wantKeys, keys, sortStrings); diff != "" {
		t.Errorf("summary members (-want +got):\n%s", diff)
	}
	if got := string(body.JobSummaryList[0]["createdAt"]); got != "1774000000123" {
		t.Errorf("createdAt = %s, want an integer of epoch ms", got)
	}
}

func TestSnapshotShape(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	out, err := client.GetJobQueueSnapshot(t.Context(), &batch.GetJobQueueSnapshotInput{JobQueue: aws.String(testBase.JobQueue("HQ"))})
	if err != nil {
		t.Fatal(err)
	}
	wantEngineGot(t, fake, "GetJobQueueSnapshot", testBase.JobQueue("HQ"))
	jobArn := testBase.ServiceJob(jobID)
	front := []types.FrontOfQueueJobSummary{{JobArn: aws.String(jobArn), EarliestTimeAtPosition: aws.Int64(1774000000500)}}
	if diff := cmp.Diff(front, out.FrontOfQueue.Jobs, ignoreSDKInternals); diff != "" {
		t.Errorf("frontOfQueue (-want +got):\n%s", diff)
	}
	shares := out.FrontOfQuotaShares.QuotaShares
	if len(shares["QS1"]) != 1 || shares["QS2"] == nil || len(shares["QS2"]) != 0 {
		t.Errorf("frontOfQuotaShares = %+v", shares)
	}
	u := out.QueueUtilization
	if aws.ToFloat64(u.TotalCapacityUsage[0].Quantity) != 9 || aws.ToString(u.QuotaShareUtilization.TopCapacityUtilization[0].QuotaShareName) != "QS1" ||
		aws.ToInt64(u.LastUpdatedAt) != 1774000003000 {
		t.Errorf("queueUtilization = %+v", u)
	}
	r := do(t, srv, "POST", "/v1/getjobqueuesnapshot", `{"jobQueue":"HQ"}`)
	if !strings.Contains(r.body, `"QS2":[]`) || !strings.Contains(r.body, `"quantity":9`) {
		t.Errorf("snapshot body %s", r.body)
	}
}

var (
	ignoreSDKInternals = cmp.FilterPath(func(p cmp.Path) bool {
		return strings.HasPrefix(fmt.Sprint(p.Last()), ".noSmithyDocumentSerde") || strings.HasSuffix(p.String(), "ResultMetadata")
	}, cmp.Ignore())
	sortStrings = cmp.Transformer("sort", func(s []string) []string {
		out := append([]string(nil), s...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
)
