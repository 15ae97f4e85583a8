package batchapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// fatalIf stops the test on an unexpected error.
func fatalIf(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// trainingPayload asks for count instances of ml.g5.xlarge for runtime
// (0: until stopped) on the simulated executor.
func trainingPayload(count int, runtime time.Duration) string {
	b, _ := json.Marshal(map[string]any{
		"TrainingJobName": "t",
		"ResourceConfig":  map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": count, "VolumeSizeInGB": 10},
		"Environment":     map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": fmt.Sprint(runtime.Milliseconds())},
	})
	return string(b)
}

// Ensure the whole quota-management flow of the SageMaker notebook works
// through the SDK against the real engine: resources up, jobs submitted,
// listed, reprioritised, snapshotted and terminated, tags, and the
// teardown in the order PySDK does it.
func TestEndToEnd(t *testing.T) {
	srv, c := newEngineServer(t)
	ctx := t.Context()
	var jobArn, waitingArn string

	t.Run("Resources", func(t *testing.T) { setUpResources(t, ctx, c) })
	t.Run("Jobs", func(t *testing.T) { jobArn, waitingArn = runJobs(t, ctx, c) })
	t.Run("Tags", func(t *testing.T) { tagging(t, ctx, c, jobArn) })
	t.Run("Terminate", func(t *testing.T) { terminate(t, ctx, srv, c, jobArn, waitingArn) })
	t.Run("TearDown", func(t *testing.T) { tearDown(t, ctx, c) })
}

func setUpResources(t *testing.T, ctx context.Context, c *batch.Client) {
	sp, err := c.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{Name: aws.String("qm-policy"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	fatalIf(t, err)
	spArn := aws.ToString(sp.Arn)
	if spArn != testBase.SchedulingPolicy("qm-policy") {
		t.Errorf("policy ARN %s", spArn)
	}
	_, err = c.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{Name: aws.String("qm-policy"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	clientExceptionIs("Object already exists")(t, err) // the notebook matches this text exactly
	_, err = c.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{Name: aws.String("spare"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	fatalIf(t, err)

	// The paginator follows nextToken until it is absent.
	var listed []string
	for p := batch.NewListSchedulingPoliciesPaginator(c, &batch.ListSchedulingPoliciesInput{MaxResults: aws.Int32(1)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		fatalIf(t, err)
		for _, item := range page.SchedulingPolicies {
			listed = append(listed, aws.ToString(item.Arn))
		}
	}
	slices.Sort(listed)
	if want := []string{spArn, testBase.SchedulingPolicy("spare")}; !slices.Equal(listed, want) {
		t.Errorf("listed policies %v, want %v", listed, want)
	}
	fatalIf(t, ignore(c.DeleteSchedulingPolicy(ctx, &batch.DeleteSchedulingPolicyInput{Arn: aws.String(testBase.SchedulingPolicy("spare"))})))

	_, err = c.CreateServiceEnvironment(ctx, &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("qm-se"),
		ServiceEnvironmentType: "SAGEMAKER_TRAINING", State: "ENABLED",
		CapacityLimits: []types.CapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(4)}}})
	fatalIf(t, err)
	testwait.True(t, 10*time.Second, "the service environment VALID and ENABLED", func() bool {
		out, err := c.DescribeServiceEnvironments(ctx, &batch.DescribeServiceEnvironmentsInput{ServiceEnvironments: []string{"qm-se"}})
		fatalIf(t, err)
		return len(out.ServiceEnvironments) == 1 && out.ServiceEnvironments[0].Status == "VALID" && out.ServiceEnvironments[0].State == "ENABLED"
	})

	_, err = c.CreateJobQueue(ctx, &batch.CreateJobQueueInput{JobQueueName: aws.String("HQ"), JobQueueType: "SAGEMAKER_TRAINING",
		State: "ENABLED", Priority: aws.Int32(1), SchedulingPolicyArn: aws.String(spArn),
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("qm-se")}},
		ComputeEnvironmentOrder: []types.ComputeEnvironmentOrder{}})
	fatalIf(t, err)
	testwait.True(t, 10*time.Second, "the job queue VALID and ENABLED", func() bool {
		out, err := c.DescribeJobQueues(ctx, &batch.DescribeJobQueuesInput{JobQueues: []string{"HQ"}})
		fatalIf(t, err)
		if len(out.JobQueues) != 1 {
			return false
		}
		q := out.JobQueues[0]
		if got := aws.ToString(q.ServiceEnvironmentOrder[0].ServiceEnvironment); got != testBase.ServiceEnvironment("qm-se") {
			t.Errorf("serviceEnvironmentOrder names %s, want the ARN", got)
		}
		return q.Status == "VALID" && q.State == "ENABLED"
	})

	for _, share := range []struct {
		name     string
		strategy types.QuotaShareResourceSharingStrategy
		borrow   *int32
	}{{"QS1", "LEND_AND_BORROW", aws.Int32(100)}, {"QS2", "LEND", nil}} {
		_, err := c.CreateQuotaShare(ctx, &batch.CreateQuotaShareInput{QuotaShareName: aws.String(share.name), JobQueue: aws.String("HQ"),
			CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(2)}},
			ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: share.strategy, BorrowLimit: share.borrow},
			// No in-share preemption: raising the waiting job's priority
			// below must not evict the running one.
			PreemptionConfiguration: &types.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"},
			State:                   "ENABLED", Tags: map[string]string{"team": share.name}})
		fatalIf(t, err)
	}
	_, err = c.CreateQuotaShare(ctx, &batch.CreateQuotaShareInput{QuotaShareName: aws.String("QS1"), JobQueue: aws.String("HQ"),
		CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(1)}},
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: "RESERVE"},
		PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}})
	wantClientException(t, err, "already exists")

	qs, err := c.DescribeQuotaShare(ctx, &batch.DescribeQuotaShareInput{QuotaShareArn: aws.String(testBase.QuotaShare("HQ", "QS1"))})
	fatalIf(t, err)
	if qs.Status != "VALID" || qs.State != "ENABLED" || aws.ToInt32(qs.ResourceSharingConfiguration.BorrowLimit) != 100 ||
		aws.ToString(qs.JobQueueArn) != testBase.JobQueue("HQ") || qs.Tags["team"] != "QS1" {
		t.Errorf("DescribeQuotaShare = %+v", qs)
	}
	list, err := c.ListQuotaShares(ctx, &batch.ListQuotaSharesInput{JobQueue: aws.String(testBase.JobQueue("HQ"))})
	fatalIf(t, err)
	if len(list.QuotaShares) != 2 {
		t.Errorf("ListQuotaShares = %d shares", len(list.QuotaShares))
	}
}

func runJobs(t *testing.T, ctx context.Context, c *batch.Client) (running, waiting string) {
	submit := func(name, share string, count int, prio int32) *batch.SubmitServiceJobOutput {
		t.Helper()
		out, err := c.SubmitServiceJob(ctx, &batch.SubmitServiceJobInput{JobName: aws.String(name), JobQueue: aws.String("HQ"),
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: aws.String(trainingPayload(count, 0)),
			QuotaShareName: aws.String(share), SchedulingPriority: aws.Int32(prio),
			RetryStrategy: &types.ServiceJobRetryStrategy{Attempts: aws.Int32(1), EvaluateOnExit: []types.ServiceJobEvaluateOnExit{
				{Action: "Retry", OnStatusReason: aws.String("Received status from SageMaker:InternalServerError*")}, {Action: "EXIT", OnStatusReason: aws.String("*")}}},
			TimeoutConfig: &types.ServiceJobTimeout{AttemptDurationSeconds: aws.Int32(86400)}})
		fatalIf(t, err)
		if aws.ToString(out.JobArn) != testBase.ServiceJob(aws.ToString(out.JobId)) || aws.ToString(out.JobName) != name {
			t.Errorf("SubmitServiceJob = %+v", out)
		}
		return out
	}
	describe := func(arn string) *batch.DescribeServiceJobOutput {
		t.Helper()
		out, err := c.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(arn)}) // PySDK passes the ARN
		fatalIf(t, err)
		return out
	}
	// A payload with a member CreateTrainingJob does not define is
	// refused, naming it, and makes no job (the JOB_NAME listing below
	// finds only train-a and train-b).
	misspelled := strings.Replace(trainingPayload(1, 0), `"InstanceType"`, `"InstanceTyp"`, 1)
	_, err := c.SubmitServiceJob(ctx, &batch.SubmitServiceJobInput{JobName: aws.String("train-misspelled"), JobQueue: aws.String("HQ"),
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: aws.String(misspelled), QuotaShareName: aws.String("QS1")})
	clientExceptionIs(`serviceRequestPayload: unknown field "ResourceConfig.InstanceTyp" (CreateTrainingJob has no such field; did you mean "InstanceType"?)`)(t, err)

	// QS1 owns 2 instances and may borrow QS2's idle 2, so a 4-instance
	// job fits it, but not while a 2-instance job runs.
	run := submit("train-a", "QS1", 2, 5)
	wait := submit("train-b", "QS1", 4, 1)
	running, waiting = aws.ToString(run.JobArn), aws.ToString(wait.JobArn)
	testwait.True(t, 10*time.Second, "train-a RUNNING", func() bool { return describe(running).Status == "RUNNING" })
	d := describe(running)
	if aws.ToString(d.QuotaShareName) != "QS1" || aws.ToInt32(d.SchedulingPriority) != 5 || aws.ToInt64(d.CreatedAt) == 0 ||
		aws.ToInt64(d.StartedAt) == 0 || d.LatestAttempt == nil || aws.ToFloat64(d.CapacityUsage[0].Quantity) != 2 {
		t.Errorf("DescribeServiceJob(train-a) = %+v", d)
	}
	if s := describe(waiting).Status; s != "RUNNABLE" {
		t.Errorf("train-b is %s, want RUNNABLE", s)
	}

	up, err := c.UpdateServiceJob(ctx, &batch.UpdateServiceJobInput{JobId: aws.String(waiting), SchedulingPriority: aws.Int32(42)})
	fatalIf(t, err)
	if aws.ToString(up.JobArn) != waiting { // the PySDK integration test asserts it
		t.Errorf("UpdateServiceJob jobArn %s, want %s", aws.ToString(up.JobArn), waiting)
	}
	if p := aws.ToInt32(describe(waiting).SchedulingPriority); p != 42 {
		t.Errorf("priority after update %d", p)
	}

	listNames := func(in *batch.ListServiceJobsInput) []string {
		t.Helper()
		out, err := c.ListServiceJobs(ctx, in)
		fatalIf(t, err)
		var names []string
		for _, j := range out.JobSummaryList {
			names = append(names, aws.ToString(j.JobName))
		}
		return names
	}
	for _, tt := range []struct {
		in   *batch.ListServiceJobsInput
		want []string
	}{
		{&batch.ListServiceJobsInput{JobQueue: aws.String("HQ")}, []string{"train-a"}}, // RUNNING by default
		{&batch.ListServiceJobsInput{JobQueue: aws.String("HQ"), JobStatus: "RUNNABLE",
			Filters: []types.KeyValuesPair{{Name: aws.String("QUOTA_SHARE_NAME"), Values: []string{"QS1"}}}}, []string{"train-b"}},
		{&batch.ListServiceJobsInput{JobQueue: aws.String("HQ"),
			Filters: []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{"TRAIN-*"}}}}, []string{"train-b", "train-a"}}, // newest first
	} {
		if got := listNames(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ListServiceJobs(%+v) = %v, want %v", tt.in, got, tt.want)
		}
	}

	snap, err := c.GetJobQueueSnapshot(ctx, &batch.GetJobQueueSnapshotInput{JobQueue: aws.String("HQ")})
	fatalIf(t, err)
	if f := snap.FrontOfQueue; f == nil || len(f.Jobs) != 1 || aws.ToString(f.Jobs[0].JobArn) != waiting {
		t.Errorf("frontOfQueue = %+v", f)
	}
	if f := snap.FrontOfQuotaShares; f == nil || len(f.QuotaShares["QS1"]) != 1 || f.QuotaShares["QS2"] == nil {
		t.Errorf("frontOfQuotaShares = %+v", f)
	}
	return running, waiting
}

func tagging(t *testing.T, ctx context.Context, c *batch.Client, jobArn string) {
	for _, arn := range []string{testBase.QuotaShare("HQ", "QS1"), testBase.JobQueue("HQ"), jobArn} {
		_, err := c.TagResource(ctx, &batch.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{"cost center": "42", "env": "test"}})
		fatalIf(t, err)
		_, err = c.UntagResource(ctx, &batch.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"env"}})
		fatalIf(t, err)
		out, err := c.ListTagsForResource(ctx, &batch.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
		fatalIf(t, err)
		if out.Tags["cost center"] != "42" || out.Tags["env"] != "" {
			t.Errorf("tags of %s = %v", arn, out.Tags)
		}
	}
	_, err := c.ListTagsForResource(ctx, &batch.ListTagsForResourceInput{ResourceArn: aws.String(testBase.JobQueue("nope"))})
	wantClientException(t, err, "does not exist")
}

func terminate(t *testing.T, ctx context.Context, srv *testserver.Server, c *batch.Client, running, waiting string) {
	_, err := c.TerminateServiceJob(ctx, &batch.TerminateServiceJobInput{JobId: aws.String(running), Reason: aws.String("done with it")})
	fatalIf(t, err)
	testwait.True(t, 10*time.Second, "train-a FAILED", func() bool {
		out, err := c.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(running)})
		fatalIf(t, err)
		return out.Status == "FAILED" && aws.ToBool(out.IsTerminated) && aws.ToString(out.StatusReason) != ""
	})
	unknown := "00000000-0000-0000-0000-000000000000"
	_, err = c.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(testBase.ServiceJob(unknown))})
	wantClientException(t, err, "does not exist")

	// TerminateServiceJobs is not in the Go SDK yet: raw JSON.
	r := srv.Do(t, "POST", "/v1/terminateservicejobs", `{"jobs":["`+waiting+`","not a job","`+unknown+`"],"reason":"cleanup"}`)
	var out struct {
		Successful []string
		Errors     []struct{ Job, Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil || r.Status != 200 {
		t.Fatalf("TerminateServiceJobs: %d %s", r.Status, r.Body)
	}
	waitingID := waiting[strings.LastIndex(waiting, "/")+1:]
	if len(out.Successful) != 1 || out.Successful[0] != waitingID || len(out.Errors) != 2 ||
		out.Errors[0].Code != "ValidationException" || out.Errors[1].Job != unknown || out.Errors[1].Code != "ClientException" {
		t.Errorf("TerminateServiceJobs = %s", r.Body)
	}
	testwait.True(t, 10*time.Second, "train-b FAILED", func() bool {
		out, err := c.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(waiting)})
		fatalIf(t, err)
		return out.Status == "FAILED" && aws.ToString(out.StatusReason) != ""
	})
}

func tearDown(t *testing.T, ctx context.Context, c *batch.Client) {
	for _, name := range []string{"QS1", "QS2"} {
		arn := aws.String(testBase.QuotaShare("HQ", name))
		fatalIf(t, ignore(c.UpdateQuotaShare(ctx, &batch.UpdateQuotaShareInput{QuotaShareArn: arn, State: "DISABLED"})))
		testwait.True(t, 10*time.Second, name+" VALID and DISABLED", func() bool {
			out, err := c.DescribeQuotaShare(ctx, &batch.DescribeQuotaShareInput{QuotaShareArn: arn})
			fatalIf(t, err)
			return out.Status == "VALID" && out.State == "DISABLED"
		})
		fatalIf(t, ignore(c.DeleteQuotaShare(ctx, &batch.DeleteQuotaShareInput{QuotaShareArn: arn})))
		testwait.True(t, 10*time.Second, name+" gone", func() bool {
			_, err := c.DescribeQuotaShare(ctx, &batch.DescribeQuotaShareInput{QuotaShareArn: arn})
			if err == nil {
				return false
			}
			wantClientException(t, err, "does not exist") // the PySDK integration test matches this
			return true
		})
	}
	fatalIf(t, ignore(c.UpdateJobQueue(ctx, &batch.UpdateJobQueueInput{JobQueue: aws.String("HQ"), State: "DISABLED"})))
	fatalIf(t, ignore(c.DeleteJobQueue(ctx, &batch.DeleteJobQueueInput{JobQueue: aws.String("HQ")})))
	testwait.True(t, 10*time.Second, "the job queue gone", func() bool {
		out, err := c.DescribeJobQueues(ctx, &batch.DescribeJobQueuesInput{JobQueues: []string{"HQ"}})
		fatalIf(t, err)
		return len(out.JobQueues) == 0 || out.JobQueues[0].Status == "DELETED"
	})
	fatalIf(t, ignore(c.DeleteSchedulingPolicy(ctx, &batch.DeleteSchedulingPolicyInput{Arn: aws.String(testBase.SchedulingPolicy("qm-policy"))})))
	fatalIf(t, ignore(c.UpdateServiceEnvironment(ctx, &batch.UpdateServiceEnvironmentInput{ServiceEnvironment: aws.String("qm-se"), State: "DISABLED"})))
	fatalIf(t, ignore(c.DeleteServiceEnvironment(ctx, &batch.DeleteServiceEnvironmentInput{ServiceEnvironment: aws.String("qm-se")})))
	testwait.True(t, 10*time.Second, "the service environment gone", func() bool {
		out, err := c.DescribeServiceEnvironments(ctx, &batch.DescribeServiceEnvironmentsInput{})
		fatalIf(t, err)
		return len(out.ServiceEnvironments) == 0 || out.ServiceEnvironments[0].Status == "DELETED"
	})
}

func ignore[T any](_ T, err error) error { return err }
