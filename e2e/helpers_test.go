package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// The walkthrough's resources (walkthrough.md).
const (
	policyName = "my-qm-scheduling-policy"
	envName    = "my-sm-training-qm-se"
	queueName  = "my-sm-training-qm-jq"
	g5         = "ml.g5.xlarge"
)

var (
	policyArn = "arn:aws:batch:" + region + ":" + account + ":scheduling-policy/" + policyName
	queueArn  = "arn:aws:batch:" + region + ":" + account + ":job-queue/" + queueName
)

func shareArn(name string) string { return queueArn + "/quota-share/" + name }

// walkthroughShares are QS1..QS3 of the walkthrough.
var walkthroughShares = []struct {
	name     string
	strategy types.QuotaShareResourceSharingStrategy
	borrow   *int32
	inShare  types.QuotaShareInSharePreemptionState
}{
	{"QS1", types.QuotaShareResourceSharingStrategyLendAndBorrow, aws.Int32(200), types.QuotaShareInSharePreemptionStateEnabled},
	{"QS2", types.QuotaShareResourceSharingStrategyLend, nil, types.QuotaShareInSharePreemptionStateDisabled},
	{"QS3", types.QuotaShareResourceSharingStrategyReserve, nil, types.QuotaShareInSharePreemptionStateDisabled},
}

// setUpWalkthrough creates the walkthrough's policy, service environment
// (seCapacity × ml.g5.xlarge), queue and three shares, and waits until all
// are VALID and ENABLED.
func setUpWalkthrough(t *testing.T, c *batch.Client, seCapacity int32) {
	t.Helper()
	_, err := c.CreateSchedulingPolicy(ctx(t), &batch.CreateSchedulingPolicyInput{Name: aws.String(policyName),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo},
		Tags:             map[string]string{"team": "ml"}})
	fatalIf(t, "CreateSchedulingPolicy", err)
	_, err = c.CreateServiceEnvironment(ctx(t), &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String(envName),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining, State: types.ServiceEnvironmentStateEnabled,
		CapacityLimits: []types.CapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(seCapacity)}}})
	fatalIf(t, "CreateServiceEnvironment", err)
	_, err = c.CreateJobQueue(ctx(t), &batch.CreateJobQueueInput{JobQueueName: aws.String(queueName), Priority: aws.Int32(1),
		JobQueueType: types.JobQueueTypeSagemakerTraining, State: types.JQStateEnabled, SchedulingPolicyArn: aws.String(policyArn),
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String(envName)}}})
	fatalIf(t, "CreateJobQueue", err)
	for _, s := range walkthroughShares {
		_, err := c.CreateQuotaShare(ctx(t), &batch.CreateQuotaShareInput{QuotaShareName: aws.String(s.name), JobQueue: aws.String(queueName),
			CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(1)}},
			ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: s.strategy, BorrowLimit: s.borrow},
			PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: s.inShare},
			State:                        types.QuotaShareStateEnabled, Tags: map[string]string{"share": s.name}})
		fatalIf(t, "CreateQuotaShare "+s.name, err)
	}

	testwait.Until(t, 10*time.Second, func() error {
		se, err := c.DescribeServiceEnvironments(ctx(t), &batch.DescribeServiceEnvironmentsInput{ServiceEnvironments: []string{envName}})
		if err != nil {
			return err
		}
		if len(se.ServiceEnvironments) != 1 || se.ServiceEnvironments[0].Status != "VALID" || se.ServiceEnvironments[0].State != "ENABLED" {
			return fmt.Errorf("service environment %s: %s, want it VALID and ENABLED", envName, js(se.ServiceEnvironments))
		}
		q, err := c.DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{JobQueues: []string{queueName}})
		if err != nil {
			return err
		}
		if len(q.JobQueues) != 1 || q.JobQueues[0].Status != "VALID" || q.JobQueues[0].State != "ENABLED" {
			return fmt.Errorf("job queue %s: %s, want it VALID and ENABLED", queueName, js(q.JobQueues))
		}
		for _, s := range walkthroughShares {
			qs, err := c.DescribeQuotaShare(ctx(t), &batch.DescribeQuotaShareInput{QuotaShareArn: aws.String(shareArn(s.name))})
			if err != nil {
				return err
			}
			if qs.Status != "VALID" || qs.State != "ENABLED" {
				return fmt.Errorf("quota share %s is %s/%s, want VALID/ENABLED", s.name, qs.Status, qs.State)
			}
		}
		return nil
	})
}

// jobSpec is what a submitted job asks for.
type jobSpec struct {
	name      string
	share     string
	priority  int32
	instances int               // default 1
	env       map[string]string // payload Environment
	retries   *int32            // preemptionRetriesBeforeTermination
}

// trainingImage is the payloads' image, which only the kube executor runs.
const trainingImage = "registry.example/train:1"

// payload is a CreateTrainingJob request for count ml.g5.xlarge
// instances. The local executor runs `sleep 600`; the simulated one runs
// until stopped unless env sets SHARQ_SIMULATED_RUNTIME_MS; on kwok's nodes
// the kube executor's pods run until deleted unless env sets KWOK_RUN.
func payload(count int, env map[string]string) string {
	p := map[string]any{
		"TrainingJobName": "t",
		"AlgorithmSpecification": map[string]any{"TrainingInputMode": "File", "TrainingImage": trainingImage,
			"ContainerEntrypoint": []string{"sleep"}, "ContainerArguments": []string{"600"}},
		"ResourceConfig": map[string]any{"InstanceType": g5, "InstanceCount": count, "VolumeSizeInGB": 10},
	}
	if env != nil {
		p["Environment"] = env
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// submit submits a job to the walkthrough queue and returns its ARN.
func submit(t *testing.T, c *batch.Client, j jobSpec) string {
	t.Helper()
	out, err := c.SubmitServiceJob(ctx(t), submitInput(j))
	fatalIf(t, "SubmitServiceJob "+j.name, err)
	if !strings.HasSuffix(aws.ToString(out.JobArn), ":service-job/"+aws.ToString(out.JobId)) || aws.ToString(out.JobName) != j.name {
		t.Fatalf("SubmitServiceJob %s answered %s, want the job's name, ID and ARN", j.name, js(out))
	}
	return aws.ToString(out.JobArn)
}

func submitInput(j jobSpec) *batch.SubmitServiceJobInput {
	if j.instances == 0 {
		j.instances = 1
	}
	in := &batch.SubmitServiceJobInput{JobName: aws.String(j.name), JobQueue: aws.String(queueName),
		ServiceJobType: types.ServiceJobTypeSagemakerTraining, ServiceRequestPayload: aws.String(payload(j.instances, j.env)),
		SchedulingPriority: aws.Int32(j.priority)}
	if j.share != "" {
		in.QuotaShareName = aws.String(j.share)
	}
	if j.retries != nil {
		in.PreemptionConfiguration = &types.ServiceJobPreemptionConfiguration{PreemptionRetriesBeforeTermination: j.retries}
	}
	return in
}

// describe describes a job by ID or ARN.
func describe(t *testing.T, c *batch.Client, job string) *batch.DescribeServiceJobOutput {
	t.Helper()
	out, err := c.DescribeServiceJob(ctx(t), &batch.DescribeServiceJobInput{JobId: aws.String(job)})
	fatalIf(t, "DescribeServiceJob "+job, err)
	return out
}

// waitStatus polls the job until it has one of the statuses.
func waitStatus(t *testing.T, c *batch.Client, job string, want ...types.ServiceJobStatus) *batch.DescribeServiceJobOutput {
	t.Helper()
	var d *batch.DescribeServiceJobOutput
	testwait.Until(t, 30*time.Second, func() error {
		out, err := c.DescribeServiceJob(ctx(t), &batch.DescribeServiceJobInput{JobId: aws.String(job)})
		if err != nil {
			return err
		}
		d = out
		if !slices.Contains(want, out.Status) {
			return fmt.Errorf("job %s is %s (statusReason %q), want %v", aws.ToString(out.JobName), out.Status, aws.ToString(out.StatusReason), want)
		}
		return nil
	})
	return d
}

// preempted is the number of times a job was preempted.
func preempted(d *batch.DescribeServiceJobOutput) int32 {
	if d.PreemptionSummary == nil {
		return 0
	}
	return aws.ToInt32(d.PreemptionSummary.PreemptedAttemptCount)
}

// snapshot gets the walkthrough queue's snapshot.
func snapshot(t *testing.T, c *batch.Client) *batch.GetJobQueueSnapshotOutput {
	t.Helper()
	out, err := c.GetJobQueueSnapshot(ctx(t), &batch.GetJobQueueSnapshotInput{JobQueue: aws.String(queueName)})
	fatalIf(t, "GetJobQueueSnapshot", err)
	return out
}

// shareUsage is a share's ml.g5.xlarge use in a snapshot.
func shareUsage(s *batch.GetJobQueueSnapshotOutput, share string) float64 {
	if s.QueueUtilization == nil || s.QueueUtilization.QuotaShareUtilization == nil {
		return 0
	}
	for _, u := range s.QueueUtilization.QuotaShareUtilization.TopCapacityUtilization {
		if aws.ToString(u.QuotaShareName) == share {
			n := 0.0
			for _, cu := range u.CapacityUsage {
				if aws.ToString(cu.CapacityUnit) == g5 {
					n += aws.ToFloat64(cu.Quantity)
				}
			}
			return n
		}
	}
	return 0
}

// totalUsage is the queue's ml.g5.xlarge use in a snapshot.
func totalUsage(s *batch.GetJobQueueSnapshotOutput) float64 {
	if s.QueueUtilization == nil {
		return 0
	}
	n := 0.0
	for _, u := range s.QueueUtilization.TotalCapacityUsage {
		if aws.ToString(u.CapacityUnit) == g5 {
			n += aws.ToFloat64(u.Quantity)
		}
	}
	return n
}

// shareFront lists the job ARNs at the front of a share in a snapshot.
func shareFront(s *batch.GetJobQueueSnapshotOutput, share string) []string {
	out := []string{}
	if s.FrontOfQuotaShares == nil {
		return nil
	}
	jobs, ok := s.FrontOfQuotaShares.QuotaShares[share]
	if !ok {
		return nil
	}
	for _, j := range jobs {
		out = append(out, aws.ToString(j.JobArn))
	}
	return out
}

// fatalIf fails the test on an unexpected error.
func fatalIf(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error %v", what, err)
	}
}

// wantClientException checks that err is a ClientException whose message
// contains want.
func wantClientException(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ce *types.ClientException
	if !errors.As(err, &ce) {
		t.Fatalf("%s: got error %v (%T), want a ClientException containing %q", what, err, err, want)
	}
	if !strings.Contains(ce.ErrorMessage(), want) {
		t.Errorf("%s: ClientException message %q does not contain %q", what, ce.ErrorMessage(), want)
	}
}

// js renders v as JSON for failure messages.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
