package engine

import (
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Inputs of the engine's job operations. The API layer has already checked
// their syntax; the engine checks what needs state and answers with *Error.
// The resources' inputs are the resource model's (batchmodel).

type SubmitServiceJobInput struct {
	JobName                 string
	JobQueue                string // name or ARN
	ServiceJobType          string
	ServiceRequestPayload   string
	ClientToken             string
	QuotaShareName          string
	ShareIdentifier         string
	SchedulingPriority      *int
	PreemptionConfiguration *record.JobPreemptionConfiguration
	RetryStrategy           *record.RetryStrategy
	TimeoutConfig           *record.TimeoutConfig
	Tags                    map[string]string
	// Owner is the submitter's principal, recorded with the job. It is
	// not part of the request: a retry by another caller is the same
	// submission.
	Owner string
	// Request is ServiceRequestPayload as trainingjob.ParseString read
	// it, when the caller needed it before submitting (the API, to
	// authorize the S3 data the payload names); nil has SubmitServiceJob
	// parse it. It is read-only, and only the submission reads it: the
	// job keeps the payload, and each attempt parses it once to start.
	Request *trainingjob.Request
}

// JobFilter is one ListServiceJobs filter.
type JobFilter struct {
	Name   string // JOB_NAME, BEFORE_CREATED_AT, AFTER_CREATED_AT, SHARE_IDENTIFIER, QUOTA_SHARE_NAME
	Values []string
}

type ListServiceJobsInput struct {
	JobQueue  string
	JobStatus string
	Filters   []JobFilter
	batchmodel.Page
}

// TerminateError is a job TerminateServiceJobs could not terminate.
type TerminateError struct {
	Job     string // as the request named it
	Message string
}
