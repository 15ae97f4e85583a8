package engine

import "context"

// The operations of the AWS Batch API, one method each.

func (e *Engine) CreateSchedulingPolicy(ctx context.Context, in CreateSchedulingPolicyInput) (SchedulingPolicy, error) {
	return SchedulingPolicy{}, errorf(Internal, "not implemented")
}
func (e *Engine) UpdateSchedulingPolicy(ctx context.Context, in UpdateSchedulingPolicyInput) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) DeleteSchedulingPolicy(ctx context.Context, arn string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) DescribeSchedulingPolicies(ctx context.Context, arns []string) ([]SchedulingPolicy, error) {
	return nil, errorf(Internal, "not implemented")
}
func (e *Engine) ListSchedulingPolicies(ctx context.Context, p Page) ([]SchedulingPolicy, string, error) {
	return nil, "", errorf(Internal, "not implemented")
}
func (e *Engine) CreateServiceEnvironment(ctx context.Context, in CreateServiceEnvironmentInput) (ServiceEnvironment, error) {
	return ServiceEnvironment{}, errorf(Internal, "not implemented")
}
func (e *Engine) UpdateServiceEnvironment(ctx context.Context, in UpdateServiceEnvironmentInput) (ServiceEnvironment, error) {
	return ServiceEnvironment{}, errorf(Internal, "not implemented")
}
func (e *Engine) DeleteServiceEnvironment(ctx context.Context, nameOrArn string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) DescribeServiceEnvironments(ctx context.Context, namesOrArns []string, p Page) ([]ServiceEnvironment, string, error) {
	return nil, "", errorf(Internal, "not implemented")
}
func (e *Engine) CreateJobQueue(ctx context.Context, in CreateJobQueueInput) (JobQueue, error) {
	return JobQueue{}, errorf(Internal, "not implemented")
}
func (e *Engine) UpdateJobQueue(ctx context.Context, in UpdateJobQueueInput) (JobQueue, error) {
	return JobQueue{}, errorf(Internal, "not implemented")
}
func (e *Engine) DeleteJobQueue(ctx context.Context, nameOrArn string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) DescribeJobQueues(ctx context.Context, namesOrArns []string, p Page) ([]JobQueue, string, error) {
	return nil, "", errorf(Internal, "not implemented")
}
func (e *Engine) CreateQuotaShare(ctx context.Context, in CreateQuotaShareInput) (QuotaShare, error) {
	return QuotaShare{}, errorf(Internal, "not implemented")
}
func (e *Engine) UpdateQuotaShare(ctx context.Context, in UpdateQuotaShareInput) (QuotaShare, error) {
	return QuotaShare{}, errorf(Internal, "not implemented")
}
func (e *Engine) DeleteQuotaShare(ctx context.Context, arn string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) DescribeQuotaShare(ctx context.Context, arn string) (QuotaShare, error) {
	return QuotaShare{}, errorf(Internal, "not implemented")
}
func (e *Engine) ListQuotaShares(ctx context.Context, jobQueue string, p Page) ([]QuotaShare, string, error) {
	return nil, "", errorf(Internal, "not implemented")
}

// SubmitServiceJob returns the new job (jobArn, jobId, jobName are what the API answers).
func (e *Engine) SubmitServiceJob(ctx context.Context, in SubmitServiceJobInput) (ServiceJob, error) {
	return ServiceJob{}, errorf(Internal, "not implemented")
}
func (e *Engine) UpdateServiceJob(ctx context.Context, jobID string, priority int) (ServiceJob, error) {
	return ServiceJob{}, errorf(Internal, "not implemented")
}
func (e *Engine) TerminateServiceJob(ctx context.Context, jobID, reason string) error {
	return errorf(Internal, "not implemented")
}

// TerminateServiceJobs terminates each job on its own: it returns the IDs
// that succeeded and an error entry for each that did not.
func (e *Engine) TerminateServiceJobs(ctx context.Context, jobIDs []string, reason string) ([]string, []TerminateError, error) {
	return nil, nil, errorf(Internal, "not implemented")
}
func (e *Engine) DescribeServiceJob(ctx context.Context, jobID string) (ServiceJob, error) {
	return ServiceJob{}, errorf(Internal, "not implemented")
}

// ListServiceJobs returns full job records; the API encodes the summary fields.
func (e *Engine) ListServiceJobs(ctx context.Context, in ListServiceJobsInput) ([]ServiceJob, string, error) {
	return nil, "", errorf(Internal, "not implemented")
}
func (e *Engine) GetJobQueueSnapshot(ctx context.Context, jobQueue string) (QueueSnapshot, error) {
	return QueueSnapshot{}, errorf(Internal, "not implemented")
}
func (e *Engine) TagResource(ctx context.Context, arn string, tags map[string]string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) UntagResource(ctx context.Context, arn string, keys []string) error {
	return errorf(Internal, "not implemented")
}
func (e *Engine) ListTagsForResource(ctx context.Context, arn string) (map[string]string, error) {
	return nil, errorf(Internal, "not implemented")
}
