package engine

import "encoding/json"

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
	QuotaSharePolicy *QuotaSharePolicy
	FairsharePolicy  json.RawMessage
	Tags             map[string]string
}

type UpdateSchedulingPolicyInput struct {
	Arn              string
	QuotaSharePolicy *QuotaSharePolicy
	FairsharePolicy  json.RawMessage
}

type CreateServiceEnvironmentInput struct {
	Name           string
	Type           string
	CapacityLimits []CapacityLimit
	State          string // "" means ENABLED
	Tags           map[string]string
}

type UpdateServiceEnvironmentInput struct {
	ServiceEnvironment string // name or ARN
	CapacityLimits     []CapacityLimit
	State              string // "" means unchanged
}

type CreateJobQueueInput struct {
	Name                     string
	Priority                 int
	Type                     string
	ServiceEnvironmentOrder  []ServiceEnvironmentOrder // names or ARNs
	SchedulingPolicyArn      string
	State                    string
	JobStateTimeLimitActions []JobStateTimeLimitAction
	ComputeEnvironmentOrder  []json.RawMessage
	Tags                     map[string]string
}

type UpdateJobQueueInput struct {
	JobQueue                 string // name or ARN
	State                    string
	SchedulingPolicyArn      string
	Priority                 *int
	ServiceEnvironmentOrder  []ServiceEnvironmentOrder
	JobStateTimeLimitActions []JobStateTimeLimitAction // nil: unchanged
	ComputeEnvironmentOrder  []json.RawMessage
}

type CreateQuotaShareInput struct {
	Name                         string
	JobQueue                     string // name or ARN
	CapacityLimits               []CapacityLimit
	ResourceSharingConfiguration ResourceSharingConfiguration
	PreemptionConfiguration      QuotaSharePreemptionConfiguration
	State                        string
	Tags                         map[string]string
}

type UpdateQuotaShareInput struct {
	QuotaShareArn                string
	CapacityLimits               []CapacityLimit
	ResourceSharingConfiguration *ResourceSharingConfiguration
	PreemptionConfiguration      *QuotaSharePreemptionConfiguration
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
	PreemptionConfiguration *JobPreemptionConfiguration
	RetryStrategy           *RetryStrategy
	TimeoutConfig           *TimeoutConfig
	Tags                    map[string]string
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

// TerminateResult is one job's outcome in TerminateServiceJobs.
type TerminateError struct {
	Job     string `json:"job"`
	Code    string `json:"code"`
	Message string `json:"message"`
}
