package batchapi

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// Valid inputs of every operation, as a client would send them. The
// validation tests break one member at a time; the shape tests send them
// as they are.

func goodCreatePolicy() *batch.CreateSchedulingPolicyInput {
	return &batch.CreateSchedulingPolicyInput{Name: aws.String("sp"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}, Tags: tags()}
}

func goodUpdatePolicy() *batch.UpdateSchedulingPolicyInput {
	return &batch.UpdateSchedulingPolicyInput{Arn: aws.String(testBase.SchedulingPolicy("sp")),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}}
}

func goodDeletePolicy() *batch.DeleteSchedulingPolicyInput {
	return &batch.DeleteSchedulingPolicyInput{Arn: aws.String(testBase.SchedulingPolicy("sp"))}
}

func goodDescribePolicies() *batch.DescribeSchedulingPoliciesInput {
	return &batch.DescribeSchedulingPoliciesInput{Arns: []string{testBase.SchedulingPolicy("sp")}}
}

func goodListPolicies() *batch.ListSchedulingPoliciesInput {
	return &batch.ListSchedulingPoliciesInput{MaxResults: aws.Int32(10), NextToken: aws.String("t")}
}

func goodCreateEnvironment() *batch.CreateServiceEnvironmentInput {
	return &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("se"),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining, State: types.ServiceEnvironmentStateEnabled,
		CapacityLimits: []types.CapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(4)}}, Tags: tags()}
}

func goodUpdateEnvironment() *batch.UpdateServiceEnvironmentInput {
	return &batch.UpdateServiceEnvironmentInput{ServiceEnvironment: aws.String("se"), State: types.ServiceEnvironmentStateDisabled}
}

func goodDeleteEnvironment() *batch.DeleteServiceEnvironmentInput {
	return &batch.DeleteServiceEnvironmentInput{ServiceEnvironment: aws.String(testBase.ServiceEnvironment("se"))}
}

func goodDescribeEnvironments() *batch.DescribeServiceEnvironmentsInput {
	return &batch.DescribeServiceEnvironmentsInput{ServiceEnvironments: []string{"se"}}
}

func goodTimeLimitAction() types.JobStateTimeLimitAction {
	return types.JobStateTimeLimitAction{Action: types.JobStateTimeLimitActionsActionTerminate, MaxTimeSeconds: aws.Int32(600),
		Reason: aws.String("CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"), State: types.JobStateTimeLimitActionsStateRunnable}
}

func goodCreateQueue() *batch.CreateJobQueueInput {
	return &batch.CreateJobQueueInput{JobQueueName: aws.String("HQ"), Priority: aws.Int32(1),
		JobQueueType: types.JobQueueTypeSagemakerTraining, State: types.JQStateEnabled,
		SchedulingPolicyArn:      aws.String(testBase.SchedulingPolicy("sp")),
		ServiceEnvironmentOrder:  []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("se")}},
		ComputeEnvironmentOrder:  []types.ComputeEnvironmentOrder{},
		JobStateTimeLimitActions: []types.JobStateTimeLimitAction{goodTimeLimitAction()}, Tags: tags()}
}

func goodUpdateQueue() *batch.UpdateJobQueueInput {
	return &batch.UpdateJobQueueInput{JobQueue: aws.String("HQ"), State: types.JQStateDisabled}
}

func goodDeleteQueue() *batch.DeleteJobQueueInput {
	return &batch.DeleteJobQueueInput{JobQueue: aws.String(testBase.JobQueue("HQ"))}
}

func goodDescribeQueues() *batch.DescribeJobQueuesInput {
	return &batch.DescribeJobQueuesInput{JobQueues: []string{"HQ"}, MaxResults: aws.Int32(100)}
}

func goodCreateShare() *batch.CreateQuotaShareInput {
	return &batch.CreateQuotaShareInput{QuotaShareName: aws.String("QS1"), JobQueue: aws.String("HQ"),
		CapacityLimits: []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String("ml.g5.xlarge"), MaxCapacity: aws.Int32(2)}},
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{
			Strategy: types.QuotaShareResourceSharingStrategyLendAndBorrow, BorrowLimit: aws.Int32(200)},
		PreemptionConfiguration: &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionStateEnabled},
		State:                   types.QuotaShareStateEnabled, Tags: tags()}
}

func goodUpdateShare() *batch.UpdateQuotaShareInput {
	return &batch.UpdateQuotaShareInput{QuotaShareArn: aws.String(testBase.QuotaShare("HQ", "QS1")), State: types.QuotaShareStateDisabled}
}

func goodDeleteShare() *batch.DeleteQuotaShareInput {
	return &batch.DeleteQuotaShareInput{QuotaShareArn: aws.String(testBase.QuotaShare("HQ", "QS1"))}
}

func goodDescribeShare() *batch.DescribeQuotaShareInput {
	return &batch.DescribeQuotaShareInput{QuotaShareArn: aws.String(testBase.QuotaShare("HQ", "QS1"))}
}

func goodListShares() *batch.ListQuotaSharesInput {
	return &batch.ListQuotaSharesInput{JobQueue: aws.String("HQ"), MaxResults: aws.Int32(1)}
}

func goodSubmit() *batch.SubmitServiceJobInput {
	return &batch.SubmitServiceJobInput{JobName: aws.String("train"), JobQueue: aws.String("HQ"),
		ServiceJobType:        types.ServiceJobTypeSagemakerTraining,
		ServiceRequestPayload: aws.String(`{"TrainingJobName":"train","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2}}`),
		QuotaShareName:        aws.String("QS1"), SchedulingPriority: aws.Int32(5),
		RetryStrategy: &types.ServiceJobRetryStrategy{Attempts: aws.Int32(2), EvaluateOnExit: []types.ServiceJobEvaluateOnExit{
			{Action: "Retry", OnStatusReason: aws.String("Received status from SageMaker:InternalServerError*")},
			{Action: "exit", OnStatusReason: aws.String("*")}}},
		TimeoutConfig:           &types.ServiceJobTimeout{AttemptDurationSeconds: aws.Int32(86400)},
		PreemptionConfiguration: &types.ServiceJobPreemptionConfiguration{PreemptionRetriesBeforeTermination: aws.Int32(3)},
		Tags:                    tags()}
}

func goodUpdateJob() *batch.UpdateServiceJobInput {
	return &batch.UpdateServiceJobInput{JobId: aws.String(jobID), SchedulingPriority: aws.Int32(9)}
}

func goodTerminateJob() *batch.TerminateServiceJobInput {
	return &batch.TerminateServiceJobInput{JobId: aws.String(jobID), Reason: aws.String("no longer needed")}
}

func goodDescribeJob() *batch.DescribeServiceJobInput {
	return &batch.DescribeServiceJobInput{JobId: aws.String(jobID)}
}

func goodListJobs() *batch.ListServiceJobsInput {
	return &batch.ListServiceJobsInput{JobQueue: aws.String("HQ"), JobStatus: types.ServiceJobStatusRunning,
		Filters: []types.KeyValuesPair{{Name: aws.String("QUOTA_SHARE_NAME"), Values: []string{"QS1"}}}}
}

func goodSnapshot() *batch.GetJobQueueSnapshotInput {
	return &batch.GetJobQueueSnapshotInput{JobQueue: aws.String("HQ")}
}

func goodTag() *batch.TagResourceInput {
	return &batch.TagResourceInput{ResourceArn: aws.String(testBase.QuotaShare("HQ", "QS1")), Tags: tags()}
}

func goodUntag() *batch.UntagResourceInput {
	return &batch.UntagResourceInput{ResourceArn: aws.String(testBase.QuotaShare("HQ", "QS1")), TagKeys: []string{"team", "cost center"}}
}

func goodListTags() *batch.ListTagsForResourceInput {
	return &batch.ListTagsForResourceInput{ResourceArn: aws.String(testBase.QuotaShare("HQ", "QS1"))}
}

// sdkCall sends good() changed by mut through the SDK operation op.
func sdkCall[In, Out any](op func(*batch.Client, context.Context, *In, ...func(*batch.Options)) (Out, error),
	good func() *In, mut func(*In)) func(context.Context, *batch.Client) error {
	return func(ctx context.Context, c *batch.Client) error {
		in := good()
		mut(in)
		_, err := op(c, ctx, in)
		return err
	}
}

// manyTags returns n distinct tags with keys and values of the given sizes.
func manyTags(n, keyLen, valueLen int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		k := fmt.Sprintf("%0*d", keyLen, i)
		m[k] = fmt.Sprintf("%0*d", valueLen, i)
	}
	return m
}

func strs(n int, f func(i int) string) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}
