package engine

import (
	"encoding/json"

	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Inputs of the engine's operations. The API layer has already checked
// their syntax (required fields, enums, lengths, ranges); the engine checks
// what needs state (existence, uniqueness, cross-resource rules) and
// answers with *Error. Pointer fields in updates mean "unchanged" when nil.

// Page selects one page of a listing.
type Page struct {
	MaxResults int // 0 means the operation's default (100)
	NextToken  string
}

type CreateSchedulingPolicyInput struct {
	Name             string
	QuotaSharePolicy *record.QuotaSharePolicy
	FairsharePolicy  json.RawMessage
	Tags             map[string]string
}

type UpdateSchedulingPolicyInput struct {
	Arn              string
	QuotaSharePolicy *record.QuotaSharePolicy
	FairsharePolicy  json.RawMessage
}

type CreateServiceEnvironmentInput struct {
	Name           string
	Type           string
	CapacityLimits []record.CapacityLimit
	State          string // "" means ENABLED
	Tags           map[string]string
}

type UpdateServiceEnvironmentInput struct {
	ServiceEnvironment string // name or ARN
	CapacityLimits     []record.CapacityLimit
	State              string // "" means unchanged
}

type CreateJobQueueInput struct {
	Name                     string
	Priority                 int
	Type                     string
	ServiceEnvironmentOrder  []record.ServiceEnvironmentOrder // names or ARNs
	SchedulingPolicyArn      string
	State                    string
	JobStateTimeLimitActions []record.JobStateTimeLimitAction
	ComputeEnvironmentOrder  []json.RawMessage
	Tags                     map[string]string
}

type UpdateJobQueueInput struct {
	JobQueue                 string // name or ARN
	State                    string
	SchedulingPolicyArn      string
	Priority                 *int
	ServiceEnvironmentOrder  []record.ServiceEnvironmentOrder
	JobStateTimeLimitActions []record.JobStateTimeLimitAction // nil: unchanged
	ComputeEnvironmentOrder  []json.RawMessage
}

type CreateQuotaShareInput struct {
	Name                         string
	JobQueue                     string // name or ARN
	CapacityLimits               []record.CapacityLimit
	ResourceSharingConfiguration record.ResourceSharingConfiguration
	PreemptionConfiguration      record.QuotaSharePreemptionConfiguration
	State                        string
	Tags                         map[string]string
}

type UpdateQuotaShareInput struct {
	QuotaShareArn                string
	CapacityLimits               []record.CapacityLimit
	ResourceSharingConfiguration *record.ResourceSharingConfiguration
	PreemptionConfiguration      *record.QuotaSharePreemptionConfiguration
	State                        string
}

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
	Page
}

// TerminateError is a job TerminateServiceJobs could not terminate.
type TerminateError struct {
	Job     string // as the request named it
	Message string
}
