package batchapi

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/jsonlite"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// SubmitServiceJob's request, as clients send it: pointers tell an absent
// member from a zero.

// EvaluateOnExitRequest is one retry rule as sent.
type EvaluateOnExitRequest struct {
	Action         string `json:"action"`
	OnStatusReason string `json:"onStatusReason"`
}

// RetryStrategyRequest is a retry strategy as sent.
type RetryStrategyRequest struct {
	Attempts       *int                    `json:"attempts"`
	EvaluateOnExit []EvaluateOnExitRequest `json:"evaluateOnExit"`
}

// TimeoutConfigRequest is a timeout as sent.
type TimeoutConfigRequest struct {
	AttemptDurationSeconds *int `json:"attemptDurationSeconds"`
}

// JobPreemptionRequest is a job's preemption configuration as sent.
type JobPreemptionRequest struct {
	PreemptionRetriesBeforeTermination *int `json:"preemptionRetriesBeforeTermination"`
}

// SubmitServiceJobRequest is SubmitServiceJob's body; sharq's dry-run
// route takes it too.
type SubmitServiceJobRequest struct {
	JobName                 string                `json:"jobName"`
	JobQueue                string                `json:"jobQueue"`
	ServiceJobType          string                `json:"serviceJobType"`
	ServiceRequestPayload   string                `json:"serviceRequestPayload"`
	ClientToken             *string               `json:"clientToken"`
	QuotaShareName          string                `json:"quotaShareName"`
	ShareIdentifier         string                `json:"shareIdentifier"`
	SchedulingPriority      *int                  `json:"schedulingPriority"`
	PreemptionConfiguration *JobPreemptionRequest `json:"preemptionConfiguration"`
	RetryStrategy           *RetryStrategyRequest `json:"retryStrategy"`
	TimeoutConfig           *TimeoutConfigRequest `json:"timeoutConfig"`
	Tags                    map[string]string     `json:"tags"`
}

type updateServiceJobRequest struct {
	JobID              string `json:"jobId"`
	SchedulingPriority *int   `json:"schedulingPriority"`
}

type terminateServiceJobRequest struct {
	JobID  string `json:"jobId"`
	Reason string `json:"reason"`
}

type terminateServiceJobsRequest struct {
	Jobs   []string `json:"jobs"`
	Reason string   `json:"reason"`
}

type jobIDRequest struct {
	JobID string `json:"jobId"`
}

type keyValuesPair struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

type listServiceJobsRequest struct {
	JobQueue  string          `json:"jobQueue"`
	JobStatus string          `json:"jobStatus"`
	Filters   []keyValuesPair `json:"filters"`
	pageRequest
}

// terminateError is one job TerminateServiceJobs did not terminate.
type terminateError struct {
	Job     string `json:"job"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// jobRef is the output of SubmitServiceJob and UpdateServiceJob.
type jobRef struct {
	JobArn  string `json:"jobArn"`
	JobID   string `json:"jobId"`
	JobName string `json:"jobName"`
}

var jobStatuses = []string{"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"}

var jobFilterNames = []string{"JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT", "SHARE_IDENTIFIER", "QUOTA_SHARE_NAME"}

func (s *Handler) submitServiceJob(ctx context.Context, in *SubmitServiceJobRequest) (any, error) {
	input, err := in.Input()
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, "batch:SubmitServiceJob", s.submitResource(in.JobQueue, in.QuotaShareName)); err != nil {
		return nil, err
	}
	if s.opts.ServesS3 {
		// Parsed here, for the engine too. A payload that does not parse
		// names no data: the engine refuses it, with its reason.
		if r, err := trainingjob.ParseString(input.ServiceRequestPayload); err == nil {
			if err := s.authorizeData(ctx, r); err != nil {
				return nil, err
			}
			input.Request = r
		}
	}
	if caller := access.Caller(ctx); !caller.Anonymous {
		input.Owner = caller.Principal
	}
	job, err := s.eng.SubmitServiceJob(ctx, input)
	if err != nil {
		return nil, err
	}
	return jobRef{job.JobArn, job.JobID, job.JobName}, nil
}

// Input checks the request as SubmitServiceJob does before it touches any
// state, and returns the engine's input for it. Its error is the
// ClientException the API answers.
func (in SubmitServiceJobRequest) Input() (engine.SubmitServiceJobInput, error) {
	var c check
	c.name("jobName", in.JobName)
	c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue)
	c.required("serviceJobType", in.ServiceJobType)
	c.enum("serviceJobType", in.ServiceJobType, sageMakerTraining)
	c.payload(in.ServiceRequestPayload)
	if in.ClientToken != nil {
		c.length("clientToken", *in.ClientToken, 1, 64)
	}
	if in.QuotaShareName != "" && in.ShareIdentifier != "" {
		c.failf("Only one of quotaShareName and shareIdentifier can be specified")
	}
	c.optName("quotaShareName", in.QuotaShareName)
	c.length("shareIdentifier", in.ShareIdentifier, 0, 255)
	c.between("schedulingPriority", in.SchedulingPriority, 0, maxPriority)
	if p := in.PreemptionConfiguration; p != nil {
		c.atLeast("preemptionConfiguration.preemptionRetriesBeforeTermination", p.PreemptionRetriesBeforeTermination, 0)
		c.int32Member("preemptionConfiguration.preemptionRetriesBeforeTermination", p.PreemptionRetriesBeforeTermination)
	}
	retry := c.retryStrategy(in.RetryStrategy)
	if t := in.TimeoutConfig; t != nil {
		c.atLeast("timeoutConfig.attemptDurationSeconds", t.AttemptDurationSeconds, 1)
		c.int32Member("timeoutConfig.attemptDurationSeconds", t.AttemptDurationSeconds)
	}
	c.tags("tags", in.Tags)
	if c.err != nil {
		return engine.SubmitServiceJobInput{}, c.err
	}
	return engine.SubmitServiceJobInput{
		JobName: in.JobName, JobQueue: in.JobQueue, ServiceJobType: in.ServiceJobType,
		ServiceRequestPayload: in.ServiceRequestPayload, ClientToken: deref(in.ClientToken),
		QuotaShareName: in.QuotaShareName, ShareIdentifier: in.ShareIdentifier,
		SchedulingPriority: in.SchedulingPriority, PreemptionConfiguration: toJobPreemption(in.PreemptionConfiguration),
		RetryStrategy: retry, TimeoutConfig: toTimeout(in.TimeoutConfig), Tags: in.Tags,
	}, nil
}

// submitResource is what a submission is authorized on: the quota share
// it names, else its job queue.
func (s *Handler) submitResource(queue, share string) string {
	if share != "" {
		return s.base.QuotaShareIn(queue, share)
	}
	return s.base.Of(arn.JobQueue, queue)
}

func (s *Handler) updateServiceJob(ctx context.Context, in *updateServiceJobRequest) (any, error) {
	job, err := s.UpdateServiceJob(ctx, in.JobID, in.SchedulingPriority)
	if err != nil {
		return nil, err
	}
	return jobRef{job.JobArn, job.JobID, job.JobName}, nil
}

// UpdateServiceJob is the operation UpdateServiceJob: it checks the job
// (an ID or ARN) and the priority, authorizes batch:UpdateServiceJob on the
// job's ARN and sets the priority. /v1/updateservicejob and the console's
// priority route both run it.
func (s *Handler) UpdateServiceJob(ctx context.Context, jobID string, priority *int) (ServiceJob, error) {
	var c check
	id := s.jobID(&c, "jobId", jobID)
	if present(&c, "schedulingPriority", priority) {
		c.between("schedulingPriority", priority, 0, maxPriority)
	}
	if c.err != nil {
		return ServiceJob{}, c.err
	}
	if err := s.authorize(ctx, "batch:UpdateServiceJob", s.base.Of(arn.ServiceJob, id)); err != nil {
		return ServiceJob{}, err
	}
	j, err := s.eng.UpdateServiceJob(ctx, id, *priority)
	if err != nil {
		return ServiceJob{}, err
	}
	return ServiceJobOf(j), nil
}

func (s *Handler) terminateServiceJob(ctx context.Context, in *terminateServiceJobRequest) (any, error) {
	return noBody{}, s.TerminateServiceJob(ctx, in.JobID, in.Reason)
}

// TerminateServiceJob is the operation TerminateServiceJob: it checks the
// job (an ID or ARN) and the reason, authorizes batch:TerminateServiceJob
// on the job's ARN and terminates it. /v1/terminateservicejob and the
// console's terminate route both run it.
func (s *Handler) TerminateServiceJob(ctx context.Context, jobID, reason string) error {
	var c check
	id := s.jobID(&c, "jobId", jobID)
	c.required("reason", reason)
	if c.err != nil {
		return c.err
	}
	if err := s.authorize(ctx, "batch:TerminateServiceJob", s.base.Of(arn.ServiceJob, id)); err != nil {
		return err
	}
	return s.eng.TerminateServiceJob(ctx, id, reason)
}

// terminateServiceJobs terminates each job on its own: a malformed ID is
// reported in errors (ValidationException), and so is a job the caller may
// not terminate (AccessDeniedException: as AWS, it takes
// batch:TerminateServiceJob on each job); the others go ahead.
func (s *Handler) terminateServiceJobs(ctx context.Context, in *terminateServiceJobsRequest) (any, error) {
	var c check
	if in.Jobs == nil {
		c.failf("jobs is required")
	}
	c.count("jobs", len(in.Jobs), 1, maxTerminateJobs)
	c.required("reason", in.Reason)
	if c.err != nil {
		return nil, c.err
	}
	out := struct {
		Successful []string         `json:"successful"`
		Errors     []terminateError `json:"errors"`
	}{Successful: []string{}, Errors: []terminateError{}}
	var ids []string
	for _, j := range in.Jobs {
		id, ok := s.parseJobID(j)
		if !ok {
			out.Errors = append(out.Errors, terminateError{Job: j, Code: "ValidationException",
				Message: strconv.Quote(j) + " is not a service job ID or ARN"})
			continue
		}
		err := s.authorize(ctx, "batch:TerminateServiceJob", s.base.Of(arn.ServiceJob, id))
		if de, denied := errors.AsType[*access.DeniedError](err); denied {
			out.Errors = append(out.Errors, terminateError{Job: j, Code: accessDeniedException, Message: de.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return out, nil
	}
	ok, failed, err := s.eng.TerminateServiceJobs(ctx, ids, in.Reason)
	if err != nil {
		return nil, err
	}
	out.Successful = append(out.Successful, ok...)
	for _, f := range failed {
		out.Errors = append(out.Errors, terminateError{Job: f.Job, Code: "ClientException", Message: f.Message})
	}
	return out, nil
}

func (s *Handler) describeServiceJob(ctx context.Context, in *jobIDRequest) (any, error) {
	var c check
	id := s.jobID(&c, "jobId", in.JobID)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DescribeServiceJob", s.base.Of(arn.ServiceJob, id)); err != nil {
		return nil, err
	}
	job, err := s.eng.DescribeServiceJob(ctx, id)
	if err != nil {
		return nil, err
	}
	return ServiceJobOf(job), nil
}

func (s *Handler) listServiceJobs(ctx context.Context, in *listServiceJobsRequest) (any, error) {
	var c check
	if in.JobQueue != "" {
		c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue)
	}
	c.enum("jobStatus", in.JobStatus, jobStatuses...)
	filters := c.jobFilters(in.Filters)
	page := c.page(in.pageRequest)
	if c.err != nil {
		return nil, c.err
	}
	resource := access.AnyResource
	if in.JobQueue != "" {
		resource = s.base.Of(arn.JobQueue, in.JobQueue)
	}
	if err := s.authorize(ctx, "batch:ListServiceJobs", resource); err != nil {
		return nil, err
	}
	jobs, next, err := s.eng.ListServiceJobs(ctx, engine.ListServiceJobsInput{
		JobQueue: in.JobQueue, JobStatus: in.JobStatus, Filters: filters, Page: page,
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		JobSummaryList []serviceJobSummary `json:"jobSummaryList"`
		NextToken      string              `json:"nextToken,omitempty"`
	}{JobSummaryList: make([]serviceJobSummary, len(jobs)), NextToken: next}
	for i, j := range jobs {
		out.JobSummaryList[i] = summarize(j)
	}
	return out, nil
}

func (s *Handler) getJobQueueSnapshot(ctx context.Context, in *jobQueueRequest) (any, error) {
	var c check
	if c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:GetJobQueueSnapshot", s.base.Of(arn.JobQueue, in.JobQueue)); err != nil {
		return nil, err
	}
	snap, err := s.eng.GetJobQueueSnapshot(ctx, in.JobQueue)
	if err != nil {
		return nil, err
	}
	return SnapshotOf(snap), nil
}

// serviceJobSummary is a ListServiceJobs item: a subset of the job's
// fields, notably without schedulingPriority.
type serviceJobSummary struct {
	CapacityUsage   []CapacityUsage `json:"capacityUsage"`
	CreatedAt       int64           `json:"createdAt,omitempty"`
	JobArn          string          `json:"jobArn,omitempty"`
	JobID           string          `json:"jobId"`
	JobName         string          `json:"jobName"`
	LatestAttempt   *LatestAttempt  `json:"latestAttempt,omitempty"`
	QuotaShareName  string          `json:"quotaShareName,omitempty"`
	ScheduledAt     int64           `json:"scheduledAt,omitempty"`
	ServiceJobType  string          `json:"serviceJobType"`
	ShareIdentifier string          `json:"shareIdentifier,omitempty"`
	StartedAt       int64           `json:"startedAt,omitempty"`
	Status          string          `json:"status,omitempty"`
	StatusReason    string          `json:"statusReason,omitempty"`
	StoppedAt       int64           `json:"stoppedAt,omitempty"`
}

func summarize(j record.Job) serviceJobSummary {
	return serviceJobSummary{
		CapacityUsage: CapacityUsageOf(j.CapacityUsage), CreatedAt: j.CreatedAt, JobArn: j.JobArn,
		JobID: j.JobID, JobName: j.JobName, LatestAttempt: latestAttemptOf(j.LatestAttempt),
		QuotaShareName: j.QuotaShareName, ScheduledAt: j.ScheduledAt, ServiceJobType: j.ServiceJobType,
		ShareIdentifier: j.ShareIdentifier, StartedAt: j.StartedAt, Status: j.Status,
		StatusReason: j.StatusReason, StoppedAt: j.StoppedAt,
	}
}

// jobID checks a required job reference and returns the engine's form.
func (s *Handler) jobID(c *check, field, v string) string {
	if !c.required(field, v) {
		return ""
	}
	id, ok := s.parseJobID(v)
	if !ok {
		c.failf("%s must be a service job ID or ARN", field)
	}
	return id
}

// parseJobID accepts a job ID or a service-job ARN, as PySDK passes the
// ARN where the API says jobId. An ARN of this server becomes its ID; any
// other well-formed ARN goes to the engine as it is, which finds no such
// job.
func (s *Handler) parseJobID(v string) (string, bool) {
	if !strings.HasPrefix(v, "arn:") {
		return v, arn.ValidName(v)
	}
	a, err := arn.ParseKind(v, arn.ServiceJob)
	if err != nil {
		return "", false
	}
	if s.base.Owns(a) {
		return a.Name, true
	}
	return v, true
}

// payload checks serviceRequestPayload: a JSON object (a SageMaker
// CreateTrainingJob request) of at most 10 KiB.
func (c *check) payload(p string) {
	const f = "serviceRequestPayload"
	switch {
	case !c.required(f, p):
	case len(p) > maxPayloadBytes:
		c.failf("%s must be at most %d bytes, not %d", f, maxPayloadBytes, len(p))
	case !strings.HasPrefix(strings.TrimSpace(p), "{") || !validJSON([]byte(p)):
		c.failf("%s must be a JSON object (a SageMaker CreateTrainingJob request)", f)
	}
}

// validJSON is json.Valid, quicker on the usual payload.
func validJSON(b []byte) bool { return jsonlite.Valid(b) || json.Valid(b) }

// retryStrategy checks a job's retry strategy and upper-cases its actions:
// AWS's own examples send "Retry".
func (c *check) retryStrategy(r *RetryStrategyRequest) *record.RetryStrategy {
	if r == nil {
		return nil
	}
	out := &record.RetryStrategy{}
	if present(c, "retryStrategy.attempts", r.Attempts) {
		c.between("retryStrategy.attempts", r.Attempts, 1, 10)
		out.Attempts = *r.Attempts
	}
	c.count("retryStrategy.evaluateOnExit", len(r.EvaluateOnExit), 0, 5)
	for i, e := range r.EvaluateOnExit {
		f := at("retryStrategy.evaluateOnExit", i)
		action := strings.ToUpper(e.Action)
		c.required(f+".action", action)
		if action != "" && action != "RETRY" && action != "EXIT" {
			c.failf("%s.action must be one of RETRY, EXIT, not %q", f, e.Action)
		}
		c.length(f+".onStatusReason", e.OnStatusReason, 0, 512)
		out.EvaluateOnExit = append(out.EvaluateOnExit, record.EvaluateOnExit{Action: action, OnStatusReason: e.OnStatusReason})
	}
	return out
}

// jobFilters checks ListServiceJobs' filters: at most one, of a known
// name, with one value.
func (c *check) jobFilters(fs []keyValuesPair) []engine.JobFilter {
	c.count("filters", len(fs), 0, 1)
	var out []engine.JobFilter
	for i, f := range fs {
		field := at("filters", i)
		c.required(field+".name", f.Name)
		c.enum(field+".name", f.Name, jobFilterNames...)
		c.count(field+".values", len(f.Values), 1, 1)
		for j, v := range f.Values {
			c.required(at(field+".values", j), v)
			if f.Name == "BEFORE_CREATED_AT" || f.Name == "AFTER_CREATED_AT" {
				if ms, err := strconv.ParseInt(v, 10, 64); err != nil || ms < 0 {
					c.failf("%s must be a time in milliseconds since the epoch, not %q", at(field+".values", j), v)
				}
			}
		}
		out = append(out, engine.JobFilter{Name: f.Name, Values: f.Values})
	}
	return out
}

func toJobPreemption(p *JobPreemptionRequest) *record.JobPreemptionConfiguration {
	if p == nil {
		return nil
	}
	return &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: p.PreemptionRetriesBeforeTermination}
}

func toTimeout(t *TimeoutConfigRequest) *record.TimeoutConfig {
	if t == nil {
		return nil
	}
	return &record.TimeoutConfig{AttemptDurationSeconds: deref(t.AttemptDurationSeconds)}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
