package batchapi

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// Ensure each bad input the SDK lets through comes back as a
// ClientException that the SDK decodes, with a message naming the
// problem, and never reaches the engine.
func TestBadInputThroughSDK(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	long := strings.Repeat("x", 129)
	badName := "must be 1 to 128 characters long and contain only letters, numbers, hyphens (-) and underscores (_)"

	createPolicy := func(m func(*batch.CreateSchedulingPolicyInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).CreateSchedulingPolicy, goodCreatePolicy, m)
	}
	updatePolicy := func(m func(*batch.UpdateSchedulingPolicyInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).UpdateSchedulingPolicy, goodUpdatePolicy, m)
	}
	createEnv := func(m func(*batch.CreateServiceEnvironmentInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).CreateServiceEnvironment, goodCreateEnvironment, m)
	}
	updateEnv := func(m func(*batch.UpdateServiceEnvironmentInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).UpdateServiceEnvironment, goodUpdateEnvironment, m)
	}
	createQueue := func(m func(*batch.CreateJobQueueInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).CreateJobQueue, goodCreateQueue, m)
	}
	updateQueue := func(m func(*batch.UpdateJobQueueInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).UpdateJobQueue, goodUpdateQueue, m)
	}
	createShare := func(m func(*batch.CreateQuotaShareInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).CreateQuotaShare, goodCreateShare, m)
	}
	updateShare := func(m func(*batch.UpdateQuotaShareInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).UpdateQuotaShare, goodUpdateShare, m)
	}
	submit := func(m func(*batch.SubmitServiceJobInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).SubmitServiceJob, goodSubmit, m)
	}
	listJobs := func(m func(*batch.ListServiceJobsInput)) func(context.Context, *batch.Client) error {
		return sdkCall((*batch.Client).ListServiceJobs, goodListJobs, m)
	}
	ts := func(t types.JobStateTimeLimitAction, m func(*types.JobStateTimeLimitAction)) []types.JobStateTimeLimitAction {
		m(&t)
		return []types.JobStateTimeLimitAction{t}
	}
	limit := func(unit string, n int32) types.QuotaShareCapacityLimit {
		return types.QuotaShareCapacityLimit{CapacityUnit: aws.String(unit), MaxCapacity: aws.Int32(n)}
	}
	// A payload under 10 KiB that doubles on the wire (each inner \" is
	// sent as \\\"), so that with 50 large tags the request passes 30 KiB.
	bulkyPayload := `{"a":"` + strings.Repeat(`\"`, 5000) + `"}`

	tests := map[string]struct {
		call func(context.Context, *batch.Client) error
		want string
	}{
		// Scheduling policies.
		"CreatePolicy/NameChars": {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Name = aws.String("my policy") }), "name " + badName},
		"CreatePolicy/NameLong":  {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Name = aws.String(long) }), "name " + badName},
		"CreatePolicy/BothKinds": {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.FairsharePolicy = &types.FairsharePolicy{} }), "Only one of fairsharePolicy and quotaSharePolicy can be specified"},
		"CreatePolicy/IdleEnum": {createPolicy(func(in *batch.CreateSchedulingPolicyInput) {
			in.QuotaSharePolicy.IdleResourceAssignmentStrategy = "LIFO"
		}), `quotaSharePolicy.idleResourceAssignmentStrategy must be one of FIFO, not "LIFO"`},
		"CreatePolicy/Reservation": {createPolicy(fairshare(&types.FairsharePolicy{ComputeReservation: aws.Int32(100)})), "fairsharePolicy.computeReservation must be between 0 and 99, not 100"},
		"CreatePolicy/Decay":       {createPolicy(fairshare(&types.FairsharePolicy{ShareDecaySeconds: aws.Int32(604801)})), "fairsharePolicy.shareDecaySeconds must be between 0 and 604800, not 604801"},
		"CreatePolicy/Weight": {createPolicy(fairshare(&types.FairsharePolicy{ShareDistribution: []types.ShareAttributes{
			{ShareIdentifier: aws.String("a"), WeightFactor: aws.Float32(0)}}})), "fairsharePolicy.shareDistribution[0].weightFactor must be between 0.0001 and 999.9999, not 0"},
		"CreatePolicy/Overlap": {createPolicy(fairshare(&types.FairsharePolicy{ShareDistribution: []types.ShareAttributes{
			{ShareIdentifier: aws.String("UserA*")}, {ShareIdentifier: aws.String("UserA-1")}}})),
			"fairsharePolicy.shareDistribution[1].shareIdentifier UserA-1 overlaps UserA*: the share identifiers of a fair-share policy can't overlap"},
		"CreatePolicy/Twice": {createPolicy(fairshare(&types.FairsharePolicy{ShareDistribution: []types.ShareAttributes{
			{ShareIdentifier: aws.String("blue")}, {ShareIdentifier: aws.String("blue")}}})),
			"fairsharePolicy.shareDistribution[1].shareIdentifier blue overlaps blue"},
		"CreatePolicy/TooManyTags": {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Tags = manyTags(51, 3, 1) }), "tags must have at most 50 entries, not 51"},
		"CreatePolicy/NoTags":      {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Tags = map[string]string{} }), "tags must have at least 1 entry"},
		"CreatePolicy/TagKey":      {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Tags = map[string]string{long: "v"} }), "Tag key \"" + long + "\" must be 1 to 128 characters long"},
		"CreatePolicy/TagValue":    {createPolicy(func(in *batch.CreateSchedulingPolicyInput) { in.Tags = manyTags(1, 1, 257) }), `The value of tag "0" must be at most 256 characters long`},
		"UpdatePolicy/ArnName":     {updatePolicy(func(in *batch.UpdateSchedulingPolicyInput) { in.Arn = aws.String("sp") }), "arn is not a valid scheduling policy ARN: not of the form arn:partition:batch:region:account:resource"},
		"UpdatePolicy/ArnKind": {updatePolicy(func(in *batch.UpdateSchedulingPolicyInput) { in.Arn = aws.String(testBase.JobQueue("HQ")) }),
			"arn is not a valid scheduling policy ARN: a job-queue ARN, not a scheduling-policy ARN"},
		"UpdatePolicy/BothKinds": {updatePolicy(func(in *batch.UpdateSchedulingPolicyInput) { in.FairsharePolicy = &types.FairsharePolicy{} }), "Only one of fairsharePolicy and quotaSharePolicy"},
		"DeletePolicy/Arn": {sdkCall((*batch.Client).DeleteSchedulingPolicy, goodDeletePolicy,
			func(in *batch.DeleteSchedulingPolicyInput) {
				in.Arn = aws.String("arn:aws:batch:us-east-1:123456789012:scheduling-policy/a/b")
			}), "arn is not a valid scheduling policy ARN"},
		"DescribePolicies/Many": {sdkCall((*batch.Client).DescribeSchedulingPolicies, goodDescribePolicies, func(in *batch.DescribeSchedulingPoliciesInput) {
			in.Arns = strs(101, func(int) string { return testBase.SchedulingPolicy("sp") })
		}), "arns must have at most 100 entries, not 101"},
		"DescribePolicies/Arn": {sdkCall((*batch.Client).DescribeSchedulingPolicies, goodDescribePolicies, func(in *batch.DescribeSchedulingPoliciesInput) {
			in.Arns = append(in.Arns, "sp")
		}), "arns[1] is not a valid scheduling policy ARN"},
		"ListPolicies/MaxResults0":   {sdkCall((*batch.Client).ListSchedulingPolicies, goodListPolicies, func(in *batch.ListSchedulingPoliciesInput) { in.MaxResults = aws.Int32(0) }), "maxResults must be between 1 and 100, not 0"},
		"ListPolicies/MaxResults101": {sdkCall((*batch.Client).ListSchedulingPolicies, goodListPolicies, func(in *batch.ListSchedulingPoliciesInput) { in.MaxResults = aws.Int32(101) }), "maxResults must be between 1 and 100, not 101"},

		// Service environments.
		"CreateEnv/Name":     {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.ServiceEnvironmentName = aws.String("se.1") }), "serviceEnvironmentName " + badName},
		"CreateEnv/Type":     {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.ServiceEnvironmentType = "ECS" }), `serviceEnvironmentType must be one of SAGEMAKER_TRAINING, not "ECS"`},
		"CreateEnv/State":    {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.State = "ON" }), `state must be one of ENABLED, DISABLED, not "ON"`},
		"CreateEnv/NoLimits": {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.CapacityLimits = []types.CapacityLimit{} }), "capacityLimits must have at least 1 entry"},
		"CreateEnv/MaxNeg":   {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.CapacityLimits[0].MaxCapacity = aws.Int32(-1) }), "capacityLimits[0].maxCapacity must be at least 0, not -1"},
		"CreateEnv/NoMax":    {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.CapacityLimits[0].MaxCapacity = nil }), "capacityLimits[0].maxCapacity is required"},
		"CreateEnv/NoUnit":   {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.CapacityLimits[0].CapacityUnit = nil }), "capacityLimits[0].capacityUnit is required"},
		"CreateEnv/Duplicate": {createEnv(func(in *batch.CreateServiceEnvironmentInput) {
			in.CapacityLimits = append(in.CapacityLimits, in.CapacityLimits[0])
		}), `capacityLimits has more than one limit for capacityUnit "ml.g5.xlarge"`},
		"CreateEnv/Tags": {createEnv(func(in *batch.CreateServiceEnvironmentInput) { in.Tags = manyTags(51, 2, 0) }), "tags must have at most 50 entries"},
		"UpdateEnv/Name": {updateEnv(func(in *batch.UpdateServiceEnvironmentInput) { in.ServiceEnvironment = aws.String("se 1") }),
			"serviceEnvironment must be the name or ARN of a service environment"},
		"UpdateEnv/Arn": {updateEnv(func(in *batch.UpdateServiceEnvironmentInput) {
			in.ServiceEnvironment = aws.String(testBase.JobQueue("se"))
		}),
			"serviceEnvironment is not a valid service environment ARN: a job-queue ARN, not a service-environment ARN"},
		"UpdateEnv/State":    {updateEnv(func(in *batch.UpdateServiceEnvironmentInput) { in.State = "OFF" }), `state must be one of ENABLED, DISABLED, not "OFF"`},
		"UpdateEnv/NoLimits": {updateEnv(func(in *batch.UpdateServiceEnvironmentInput) { in.CapacityLimits = []types.CapacityLimit{} }), "capacityLimits must have at least 1 entry"},
		"DeleteEnv/Name": {sdkCall((*batch.Client).DeleteServiceEnvironment, goodDeleteEnvironment, func(in *batch.DeleteServiceEnvironmentInput) {
			in.ServiceEnvironment = aws.String("arn:aws:batch:us-east-1:1234:service-environment/se")
		}), "serviceEnvironment is not a valid service environment ARN: account is not 12 digits"},
		"DescribeEnvs/Name": {sdkCall((*batch.Client).DescribeServiceEnvironments, goodDescribeEnvironments, func(in *batch.DescribeServiceEnvironmentsInput) {
			in.ServiceEnvironments = []string{"se", "bad/name"}
		}), "serviceEnvironments[1] must be the name or ARN of a service environment"},
		"DescribeEnvs/Many": {sdkCall((*batch.Client).DescribeServiceEnvironments, goodDescribeEnvironments, func(in *batch.DescribeServiceEnvironmentsInput) {
			in.ServiceEnvironments = strs(101, func(int) string { return "se" })
		}), "serviceEnvironments must have at most 100 entries, not 101"},
		"DescribeEnvs/MaxResults": {sdkCall((*batch.Client).DescribeServiceEnvironments, goodDescribeEnvironments, func(in *batch.DescribeServiceEnvironmentsInput) {
			in.MaxResults = aws.Int32(1000)
		}), "maxResults must be between 1 and 100, not 1000"},

		// Job queues.
		"CreateQueue/Name":     {createQueue(func(in *batch.CreateJobQueueInput) { in.JobQueueName = aws.String("") }), "jobQueueName is required"},
		"CreateQueue/Priority": {createQueue(func(in *batch.CreateJobQueueInput) { in.Priority = aws.Int32(-1) }), "priority must be between 0 and 2147483647, not -1"},
		"CreateQueue/Type":     {createQueue(func(in *batch.CreateJobQueueInput) { in.JobQueueType = types.JobQueueTypeEcs }), `jobQueueType "ECS" is not supported: only SAGEMAKER_TRAINING job queues can be created`},
		"CreateQueue/State":    {createQueue(func(in *batch.CreateJobQueueInput) { in.State = "PAUSED" }), `state must be one of ENABLED, DISABLED, not "PAUSED"`},
		"CreateQueue/Policy":   {createQueue(func(in *batch.CreateJobQueueInput) { in.SchedulingPolicyArn = aws.String("sp") }), "schedulingPolicyArn is not a valid scheduling policy ARN"},
		"CreateQueue/Compute": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.ComputeEnvironmentOrder = []types.ComputeEnvironmentOrder{{Order: aws.Int32(1), ComputeEnvironment: aws.String("ce")}}
		}), "computeEnvironmentOrder must be empty: a SAGEMAKER_TRAINING job queue uses serviceEnvironmentOrder"},
		"CreateQueue/NoEnv":    {createQueue(func(in *batch.CreateJobQueueInput) { in.ServiceEnvironmentOrder = nil }), "serviceEnvironmentOrder is required"},
		"CreateQueue/EmptyEnv": {createQueue(func(in *batch.CreateJobQueueInput) { in.ServiceEnvironmentOrder = []types.ServiceEnvironmentOrder{} }), "serviceEnvironmentOrder must have at least 1 entry"},
		"CreateQueue/TwoEnvs": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.ServiceEnvironmentOrder = append(in.ServiceEnvironmentOrder, types.ServiceEnvironmentOrder{Order: aws.Int32(2), ServiceEnvironment: aws.String("se2")})
		}), "serviceEnvironmentOrder must have at most 1 entry, not 2"},
		"CreateQueue/EnvName": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.ServiceEnvironmentOrder[0].ServiceEnvironment = aws.String("s e")
		}),
			"serviceEnvironmentOrder[0].serviceEnvironment must be the name or ARN of a service environment"},
		"CreateQueue/Order": {createQueue(func(in *batch.CreateJobQueueInput) { in.ServiceEnvironmentOrder[0].Order = aws.Int32(-1) }), "serviceEnvironmentOrder[0].order must be between 0 and 2147483647, not -1"},
		"CreateQueue/MaxTimeLow": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.MaxTimeSeconds = aws.Int32(599) })
		}), "jobStateTimeLimitActions[0].maxTimeSeconds must be between 600 and 86400, not 599"},
		"CreateQueue/MaxTimeHigh": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.MaxTimeSeconds = aws.Int32(86401) })
		}), "jobStateTimeLimitActions[0].maxTimeSeconds must be between 600 and 86400, not 86401"},
		"CreateQueue/Action": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.Action = types.JobStateTimeLimitActionsActionCancel })
		}), `jobStateTimeLimitActions[0].action must be one of TERMINATE, not "CANCEL"`},
		"CreateQueue/ActionState": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.State = "RUNNING" })
		}), `jobStateTimeLimitActions[0].state must be one of RUNNABLE, not "RUNNING"`},
		"CreateQueue/Reason": {createQueue(func(in *batch.CreateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.Reason = aws.String("TOO_LONG") })
		}), `jobStateTimeLimitActions[0].reason must be one of CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY, MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE, MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED, not "TOO_LONG"`},
		"CreateQueue/Tags":     {createQueue(func(in *batch.CreateJobQueueInput) { in.Tags = map[string]string{"": "v"} }), `Tag key "" must be 1 to 128 characters long`},
		"UpdateQueue/Name":     {updateQueue(func(in *batch.UpdateJobQueueInput) { in.JobQueue = aws.String("H Q") }), "jobQueue must be the name or ARN of a job queue"},
		"UpdateQueue/Priority": {updateQueue(func(in *batch.UpdateJobQueueInput) { in.Priority = aws.Int32(-5) }), "priority must be between 0 and 2147483647, not -5"},
		"UpdateQueue/State":    {updateQueue(func(in *batch.UpdateJobQueueInput) { in.State = "enabled" }), `state must be one of ENABLED, DISABLED, not "enabled"`},
		"UpdateQueue/Policy": {updateQueue(func(in *batch.UpdateJobQueueInput) {
			in.SchedulingPolicyArn = aws.String(testBase.ServiceEnvironment("sp"))
		}),
			"schedulingPolicyArn is not a valid scheduling policy ARN: a service-environment ARN, not a scheduling-policy ARN"},
		"UpdateQueue/Compute": {updateQueue(func(in *batch.UpdateJobQueueInput) {
			in.ComputeEnvironmentOrder = []types.ComputeEnvironmentOrder{{Order: aws.Int32(1), ComputeEnvironment: aws.String("ce")}}
		}), "computeEnvironmentOrder must be empty"},
		"UpdateQueue/TwoEnvs": {updateQueue(func(in *batch.UpdateJobQueueInput) {
			in.ServiceEnvironmentOrder = []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("a")}, {Order: aws.Int32(2), ServiceEnvironment: aws.String("b")}}
		}), "serviceEnvironmentOrder must have at most 1 entry, not 2"},
		"UpdateQueue/MaxTime": {updateQueue(func(in *batch.UpdateJobQueueInput) {
			in.JobStateTimeLimitActions = ts(goodTimeLimitAction(), func(a *types.JobStateTimeLimitAction) { a.MaxTimeSeconds = aws.Int32(0) })
		}), "jobStateTimeLimitActions[0].maxTimeSeconds must be between 600 and 86400, not 0"},
		"DeleteQueue/Arn": {sdkCall((*batch.Client).DeleteJobQueue, goodDeleteQueue, func(in *batch.DeleteJobQueueInput) {
			in.JobQueue = aws.String(testBase.QuotaShare("HQ", "QS1"))
		}), "jobQueue is not a valid job queue ARN: a quota-share ARN, not a job-queue ARN"},
		"DescribeQueues/Name": {sdkCall((*batch.Client).DescribeJobQueues, goodDescribeQueues, func(in *batch.DescribeJobQueuesInput) {
			in.JobQueues = []string{"arn:aws:batch:us-east-1:123456789012:job-queue"}
		}), "jobQueues[0] is not a valid job queue ARN"},
		"DescribeQueues/Many": {sdkCall((*batch.Client).DescribeJobQueues, goodDescribeQueues, func(in *batch.DescribeJobQueuesInput) {
			in.JobQueues = strs(101, func(int) string { return "HQ" })
		}), "jobQueues must have at most 100 entries, not 101"},
		"DescribeQueues/MaxResults": {sdkCall((*batch.Client).DescribeJobQueues, goodDescribeQueues, func(in *batch.DescribeJobQueuesInput) {
			in.MaxResults = aws.Int32(-1)
		}), "maxResults must be between 1 and 100, not -1"},

		// Quota shares.
		"CreateShare/Name": {createShare(func(in *batch.CreateQuotaShareInput) { in.QuotaShareName = aws.String("team a") }), "quotaShareName " + badName},
		"CreateShare/Queue": {createShare(func(in *batch.CreateQuotaShareInput) {
			in.JobQueue = aws.String("arn:aws:batch:us-east-1:123456789012:job-queue/")
		}), "jobQueue is not a valid job queue ARN"},
		"CreateShare/NoLimits": {createShare(func(in *batch.CreateQuotaShareInput) { in.CapacityLimits = []types.QuotaShareCapacityLimit{} }), "capacityLimits must have at least 1 entry"},
		"CreateShare/Max0": {createShare(func(in *batch.CreateQuotaShareInput) {
			in.CapacityLimits = append(in.CapacityLimits, limit("ml.p4d.24xlarge", 0))
		}), "capacityLimits[1].maxCapacity must be at least 1, not 0"},
		"CreateShare/Duplicate": {createShare(func(in *batch.CreateQuotaShareInput) {
			in.CapacityLimits = append(in.CapacityLimits, limit("ml.g5.xlarge", 1))
		}), `capacityLimits has more than one limit for capacityUnit "ml.g5.xlarge"`},
		"CreateShare/Strategy": {createShare(func(in *batch.CreateQuotaShareInput) { in.ResourceSharingConfiguration.Strategy = "SHARE" }), `resourceSharingConfiguration.strategy must be one of RESERVE, LEND, LEND_AND_BORROW, not "SHARE"`},
		"CreateShare/BorrowLend": {createShare(func(in *batch.CreateQuotaShareInput) { in.ResourceSharingConfiguration.Strategy = "LEND" }),
			"resourceSharingConfiguration.borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW"},
		"CreateShare/BorrowLow": {createShare(func(in *batch.CreateQuotaShareInput) { in.ResourceSharingConfiguration.BorrowLimit = aws.Int32(-2) }), "resourceSharingConfiguration.borrowLimit must be at least -1, not -2"},
		"CreateShare/InShare":   {createShare(func(in *batch.CreateQuotaShareInput) { in.PreemptionConfiguration.InSharePreemption = "YES" }), `preemptionConfiguration.inSharePreemption must be one of ENABLED, DISABLED, not "YES"`},
		"CreateShare/State":     {createShare(func(in *batch.CreateQuotaShareInput) { in.State = "ACTIVE" }), `state must be one of ENABLED, DISABLED, not "ACTIVE"`},
		"CreateShare/TagValue":  {createShare(func(in *batch.CreateQuotaShareInput) { in.Tags = manyTags(2, 4, 300) }), `The value of tag "0000" must be at most 256 characters long`},
		"UpdateShare/Arn":       {updateShare(func(in *batch.UpdateQuotaShareInput) { in.QuotaShareArn = aws.String(testBase.JobQueue("HQ")) }), "quotaShareArn is not a valid quota share ARN: a job-queue ARN, not a quota-share ARN"},
		"UpdateShare/Name":      {updateShare(func(in *batch.UpdateQuotaShareInput) { in.QuotaShareArn = aws.String("QS1") }), "quotaShareArn is not a valid quota share ARN"},
		"UpdateShare/NoLimits":  {updateShare(func(in *batch.UpdateQuotaShareInput) { in.CapacityLimits = []types.QuotaShareCapacityLimit{} }), "capacityLimits must have at least 1 entry"},
		"UpdateShare/Strategy": {updateShare(func(in *batch.UpdateQuotaShareInput) {
			in.ResourceSharingConfiguration = &types.QuotaShareResourceSharingConfiguration{Strategy: "ALL"}
		}), `resourceSharingConfiguration.strategy must be one of RESERVE, LEND, LEND_AND_BORROW, not "ALL"`},
		"UpdateShare/BorrowReserve": {updateShare(func(in *batch.UpdateQuotaShareInput) {
			in.ResourceSharingConfiguration = &types.QuotaShareResourceSharingConfiguration{Strategy: "RESERVE", BorrowLimit: aws.Int32(-1)}
		}), "borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW"},
		"UpdateShare/InShare": {updateShare(func(in *batch.UpdateQuotaShareInput) {
			in.PreemptionConfiguration = &types.QuotaSharePreemptionConfiguration{InSharePreemption: "enabled"}
		}), `preemptionConfiguration.inSharePreemption must be one of ENABLED, DISABLED, not "enabled"`},
		"UpdateShare/State": {updateShare(func(in *batch.UpdateQuotaShareInput) { in.State = "DELETED" }), `state must be one of ENABLED, DISABLED, not "DELETED"`},
		"DeleteShare/Arn": {sdkCall((*batch.Client).DeleteQuotaShare, goodDeleteShare, func(in *batch.DeleteQuotaShareInput) {
			in.QuotaShareArn = aws.String("arn:aws:batch:us-east-1:123456789012:job-queue/HQ/quota-share/QS 1")
		}), "quotaShareArn is not a valid quota share ARN: bad resource name"},
		"DescribeShare/Arn": {sdkCall((*batch.Client).DescribeQuotaShare, goodDescribeShare, func(in *batch.DescribeQuotaShareInput) {
			in.QuotaShareArn = aws.String("arn:aws:batch:us-east-1:123456789012:quota-share/QS1")
		}), "quotaShareArn is not a valid quota share ARN"},
		"ListShares/Queue": {sdkCall((*batch.Client).ListQuotaShares, goodListShares, func(in *batch.ListQuotaSharesInput) { in.JobQueue = aws.String("") }), "jobQueue is required"},
		"ListShares/MaxResults": {sdkCall((*batch.Client).ListQuotaShares, goodListShares, func(in *batch.ListQuotaSharesInput) {
			in.MaxResults = aws.Int32(101)
		}), "maxResults must be between 1 and 100, not 101"},

		// Service jobs.
		"Submit/Name":     {submit(func(in *batch.SubmitServiceJobInput) { in.JobName = aws.String("train:v1") }), "jobName " + badName},
		"Submit/NameLong": {submit(func(in *batch.SubmitServiceJobInput) { in.JobName = aws.String(long) }), "jobName " + badName},
		"Submit/Queue": {submit(func(in *batch.SubmitServiceJobInput) {
			in.JobQueue = aws.String("arn:aws:batch:us-east-1:123456789012:job-queue/HQ/x")
		}), "jobQueue is not a valid job queue ARN"},
		"Submit/Type":         {submit(func(in *batch.SubmitServiceJobInput) { in.ServiceJobType = "EKS" }), `serviceJobType must be one of SAGEMAKER_TRAINING, not "EKS"`},
		"Submit/EmptyPayload": {submit(func(in *batch.SubmitServiceJobInput) { in.ServiceRequestPayload = aws.String("") }), "serviceRequestPayload is required"},
		"Submit/PayloadJSON":  {submit(func(in *batch.SubmitServiceJobInput) { in.ServiceRequestPayload = aws.String("TrainingJobName=x") }), "serviceRequestPayload must be a JSON object (a SageMaker CreateTrainingJob request)"},
		"Submit/PayloadArray": {submit(func(in *batch.SubmitServiceJobInput) { in.ServiceRequestPayload = aws.String(`[{"a":1}]`) }), "serviceRequestPayload must be a JSON object"},
		"Submit/PayloadSize": {submit(func(in *batch.SubmitServiceJobInput) {
			in.ServiceRequestPayload = aws.String(`{"a":"` + strings.Repeat("x", 10240) + `"}`)
		}), "serviceRequestPayload must be at most 10240 bytes, not 10248"},
		"Submit/RequestSize": {submit(func(in *batch.SubmitServiceJobInput) {
			in.ServiceRequestPayload = aws.String(bulkyPayload)
			in.Tags = manyTags(50, 128, 256)
		}), "The SubmitServiceJob request exceeds the maximum size of 30720 bytes"},
		"Submit/TokenEmpty": {submit(func(in *batch.SubmitServiceJobInput) { in.ClientToken = aws.String("") }), "clientToken must be 1 to 64 characters long"},
		"Submit/TokenLong":  {submit(func(in *batch.SubmitServiceJobInput) { in.ClientToken = aws.String(strings.Repeat("t", 65)) }), "clientToken must be 1 to 64 characters long"},
		"Submit/BothShares": {submit(func(in *batch.SubmitServiceJobInput) { in.ShareIdentifier = aws.String("blue") }), "Only one of quotaShareName and shareIdentifier can be specified"},
		"Submit/ShareName":  {submit(func(in *batch.SubmitServiceJobInput) { in.QuotaShareName = aws.String("QS*") }), "quotaShareName " + badName},
		"Submit/ShareIdentifier": {submit(func(in *batch.SubmitServiceJobInput) {
			in.QuotaShareName = nil
			in.ShareIdentifier = aws.String(strings.Repeat("s", 256))
		}), "shareIdentifier must be at most 255 characters long"},
		"Submit/PriorityLow":  {submit(func(in *batch.SubmitServiceJobInput) { in.SchedulingPriority = aws.Int32(-1) }), "schedulingPriority must be between 0 and 9999, not -1"},
		"Submit/PriorityHigh": {submit(func(in *batch.SubmitServiceJobInput) { in.SchedulingPriority = aws.Int32(10000) }), "schedulingPriority must be between 0 and 9999, not 10000"},
		"Submit/PreemptionRetries": {submit(func(in *batch.SubmitServiceJobInput) {
			in.PreemptionConfiguration.PreemptionRetriesBeforeTermination = aws.Int32(-1)
		}), "preemptionConfiguration.preemptionRetriesBeforeTermination must be at least 0, not -1"},
		"Submit/Attempts0":  {submit(func(in *batch.SubmitServiceJobInput) { in.RetryStrategy.Attempts = aws.Int32(0) }), "retryStrategy.attempts must be between 1 and 10, not 0"},
		"Submit/Attempts11": {submit(func(in *batch.SubmitServiceJobInput) { in.RetryStrategy.Attempts = aws.Int32(11) }), "retryStrategy.attempts must be between 1 and 10, not 11"},
		"Submit/EvaluateMany": {submit(func(in *batch.SubmitServiceJobInput) {
			for range 4 {
				in.RetryStrategy.EvaluateOnExit = append(in.RetryStrategy.EvaluateOnExit, types.ServiceJobEvaluateOnExit{Action: "EXIT"})
			}
		}), "retryStrategy.evaluateOnExit must have at most 5 entries, not 6"},
		"Submit/Action":   {submit(func(in *batch.SubmitServiceJobInput) { in.RetryStrategy.EvaluateOnExit[1].Action = "Abort" }), `retryStrategy.evaluateOnExit[1].action must be one of RETRY, EXIT, not "Abort"`},
		"Submit/NoAction": {submit(func(in *batch.SubmitServiceJobInput) { in.RetryStrategy.EvaluateOnExit[0].Action = "" }), "retryStrategy.evaluateOnExit[0].action is required"},
		"Submit/OnStatusReason": {submit(func(in *batch.SubmitServiceJobInput) {
			in.RetryStrategy.EvaluateOnExit[0].OnStatusReason = aws.String(strings.Repeat("r", 513))
		}), "retryStrategy.evaluateOnExit[0].onStatusReason must be at most 512 characters long"},
		"Submit/Timeout":   {submit(func(in *batch.SubmitServiceJobInput) { in.TimeoutConfig.AttemptDurationSeconds = aws.Int32(0) }), "timeoutConfig.attemptDurationSeconds must be at least 1, not 0"},
		"Submit/Tags":      {submit(func(in *batch.SubmitServiceJobInput) { in.Tags = manyTags(51, 2, 2) }), "tags must have at most 50 entries, not 51"},
		"UpdateJob/ID":     {sdkCall((*batch.Client).UpdateServiceJob, goodUpdateJob, func(in *batch.UpdateServiceJobInput) { in.JobId = aws.String("job 1") }), "jobId must be a service job ID or ARN"},
		"UpdateJob/Arn":    {sdkCall((*batch.Client).UpdateServiceJob, goodUpdateJob, func(in *batch.UpdateServiceJobInput) { in.JobId = aws.String(testBase.JobQueue(jobID)) }), "jobId must be a service job ID or ARN"},
		"UpdateJob/Prio":   {sdkCall((*batch.Client).UpdateServiceJob, goodUpdateJob, func(in *batch.UpdateServiceJobInput) { in.SchedulingPriority = aws.Int32(10000) }), "schedulingPriority must be between 0 and 9999, not 10000"},
		"TerminateJob/ID":  {sdkCall((*batch.Client).TerminateServiceJob, goodTerminateJob, func(in *batch.TerminateServiceJobInput) { in.JobId = aws.String("") }), "jobId is required"},
		"TerminateJob/Why": {sdkCall((*batch.Client).TerminateServiceJob, goodTerminateJob, func(in *batch.TerminateServiceJobInput) { in.Reason = aws.String("") }), "reason is required"},
		"DescribeJob/ID":   {sdkCall((*batch.Client).DescribeServiceJob, goodDescribeJob, func(in *batch.DescribeServiceJobInput) { in.JobId = aws.String("../etc") }), "jobId must be a service job ID or ARN"},
		"ListJobs/Queue":   {listJobs(func(in *batch.ListServiceJobsInput) { in.JobQueue = aws.String("H?") }), "jobQueue must be the name or ARN of a job queue"},
		"ListJobs/Status":  {listJobs(func(in *batch.ListServiceJobsInput) { in.JobStatus = "DONE" }), `jobStatus must be one of SUBMITTED, PENDING, RUNNABLE, SCHEDULED, STARTING, RUNNING, SUCCEEDED, FAILED, not "DONE"`},
		"ListJobs/Filters": {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters = append(in.Filters, in.Filters[0]) }), "filters must have at most 1 entry, not 2"},
		"ListJobs/Filter":  {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters[0].Name = aws.String("STATUS") }), `filters[0].name must be one of JOB_NAME, BEFORE_CREATED_AT, AFTER_CREATED_AT, SHARE_IDENTIFIER, QUOTA_SHARE_NAME, not "STATUS"`},
		"ListJobs/NoName":  {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters[0].Name = nil }), "filters[0].name is required"},
		"ListJobs/NoValue": {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters[0].Values = []string{} }), "filters[0].values must have at least 1 entry"},
		"ListJobs/Values":  {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters[0].Values = []string{"a", "b"} }), "filters[0].values must have at most 1 entry, not 2"},
		"ListJobs/Empty":   {listJobs(func(in *batch.ListServiceJobsInput) { in.Filters[0].Values = []string{""} }), "filters[0].values[0] is required"},
		"ListJobs/Time": {listJobs(func(in *batch.ListServiceJobsInput) {
			in.Filters = []types.KeyValuesPair{{Name: aws.String("AFTER_CREATED_AT"), Values: []string{"2026-03-25"}}}
		}), `filters[0].values[0] must be a time in milliseconds since the epoch, not "2026-03-25"`},
		"ListJobs/MaxResults": {listJobs(func(in *batch.ListServiceJobsInput) { in.MaxResults = aws.Int32(0) }), "maxResults must be between 1 and 100, not 0"},
		"Snapshot/Queue": {sdkCall((*batch.Client).GetJobQueueSnapshot, goodSnapshot, func(in *batch.GetJobQueueSnapshotInput) {
			in.JobQueue = aws.String(testBase.SchedulingPolicy("HQ"))
		}), "jobQueue is not a valid job queue ARN: a scheduling-policy ARN, not a job-queue ARN"},

		// Tags.
		"Tag/Arn": {sdkCall((*batch.Client).TagResource, goodTag, func(in *batch.TagResourceInput) {
			in.ResourceArn = aws.String("arn:aws:batch:us-east-1:123456789012:job-definition/jd:1")
		}), "resourceArn is not the ARN of a Batch scheduling policy, service environment, job queue, quota share or service job"},
		"Tag/None":   {sdkCall((*batch.Client).TagResource, goodTag, func(in *batch.TagResourceInput) { in.Tags = map[string]string{} }), "tags must have at least 1 entry"},
		"Tag/Many":   {sdkCall((*batch.Client).TagResource, goodTag, func(in *batch.TagResourceInput) { in.Tags = manyTags(51, 2, 2) }), "tags must have at most 50 entries, not 51"},
		"Tag/Value":  {sdkCall((*batch.Client).TagResource, goodTag, func(in *batch.TagResourceInput) { in.Tags = manyTags(1, 1, 257) }), "must be at most 256 characters long"},
		"Untag/None": {sdkCall((*batch.Client).UntagResource, goodUntag, func(in *batch.UntagResourceInput) { in.TagKeys = []string{} }), "tagKeys must have at least 1 entry"},
		"Untag/Many": {sdkCall((*batch.Client).UntagResource, goodUntag, func(in *batch.UntagResourceInput) {
			in.TagKeys = strs(51, func(i int) string { return string(rune('A' + i)) })
		}), "tagKeys must have at most 50 entries, not 51"},
		"Untag/Key": {sdkCall((*batch.Client).UntagResource, goodUntag, func(in *batch.UntagResourceInput) { in.TagKeys = []string{long} }), "tagKeys entry \"" + long + "\" must be 1 to 128 characters long"},
		"Untag/Arn": {sdkCall((*batch.Client).UntagResource, goodUntag, func(in *batch.UntagResourceInput) { in.ResourceArn = aws.String("HQ") }), "resourceArn is not the ARN of a Batch"},
		"ListTags/Arn": {sdkCall((*batch.Client).ListTagsForResource, goodListTags, func(in *batch.ListTagsForResourceInput) {
			in.ResourceArn = aws.String("arn:aws:sagemaker:us-east-1:123456789012:training-job/x")
		}), "service is not batch"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			fake.reset()
			wantClientException(t, tt.call(t.Context(), client), tt.want)
			if n := fake.called(); n != 0 {
				t.Errorf("the engine was called %d times for a bad request", n)
			}
		})
	}
}

// fairshare replaces a policy's quota-share part with a fair-share one.
func fairshare(fs *types.FairsharePolicy) func(*batch.CreateSchedulingPolicyInput) {
	return func(in *batch.CreateSchedulingPolicyInput) {
		in.QuotaSharePolicy = nil
		in.FairsharePolicy = fs
	}
}
