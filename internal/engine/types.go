package engine

import "encoding/json"

// The resource and job records, in AWS Batch's wire shapes (lowerCamelCase
// JSON, timestamps as epoch milliseconds). The engine stores them as JSON
// and the API encodes them as they are.

// CapacityLimit is a maxCapacity of one capacity unit (an instance type).
type CapacityLimit struct {
	CapacityUnit string `json:"capacityUnit"`
	MaxCapacity  int    `json:"maxCapacity"`
}

// CapacityUsage is a quantity of one capacity unit in use.
type CapacityUsage struct {
	CapacityUnit string  `json:"capacityUnit"`
	Quantity     float64 `json:"quantity"`
}

// QuotaSharePolicy is a scheduling policy's quota-share part.
type QuotaSharePolicy struct {
	IdleResourceAssignmentStrategy string `json:"idleResourceAssignmentStrategy"`
}

// SchedulingPolicy is a scheduling policy (SchedulingPolicyDetail).
type SchedulingPolicy struct {
	Arn              string            `json:"arn"`
	Name             string            `json:"name"`
	QuotaSharePolicy *QuotaSharePolicy `json:"quotaSharePolicy,omitempty"`
	FairsharePolicy  json.RawMessage   `json:"fairsharePolicy,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// ServiceEnvironment is a pool of capacity (ServiceEnvironmentDetail).
type ServiceEnvironment struct {
	ServiceEnvironmentName string            `json:"serviceEnvironmentName"`
	ServiceEnvironmentArn  string            `json:"serviceEnvironmentArn"`
	ServiceEnvironmentType string            `json:"serviceEnvironmentType"`
	State                  string            `json:"state"`
	Status                 string            `json:"status"`
	CapacityLimits         []CapacityLimit   `json:"capacityLimits"`
	Tags                   map[string]string `json:"tags,omitempty"`
}

// ServiceEnvironmentOrder attaches a service environment to a queue.
type ServiceEnvironmentOrder struct {
	Order              int    `json:"order"`
	ServiceEnvironment string `json:"serviceEnvironment"`
}

// JobStateTimeLimitAction terminates a queue's head that waits too long.
type JobStateTimeLimitAction struct {
	Action         string `json:"action"`
	MaxTimeSeconds int    `json:"maxTimeSeconds"`
	Reason         string `json:"reason"`
	State          string `json:"state"`
}

// JobQueue is a job queue (JobQueueDetail).
type JobQueue struct {
	JobQueueName             string                    `json:"jobQueueName"`
	JobQueueArn              string                    `json:"jobQueueArn"`
	State                    string                    `json:"state"`
	SchedulingPolicyArn      string                    `json:"schedulingPolicyArn,omitempty"`
	Status                   string                    `json:"status"`
	StatusReason             string                    `json:"statusReason,omitempty"`
	Priority                 int                       `json:"priority"`
	ComputeEnvironmentOrder  []json.RawMessage         `json:"computeEnvironmentOrder"`
	ServiceEnvironmentOrder  []ServiceEnvironmentOrder `json:"serviceEnvironmentOrder"`
	JobQueueType             string                    `json:"jobQueueType,omitempty"`
	Tags                     map[string]string         `json:"tags"`
	JobStateTimeLimitActions []JobStateTimeLimitAction `json:"jobStateTimeLimitActions"`
}

// ResourceSharingConfiguration is a quota share's strategy.
type ResourceSharingConfiguration struct {
	Strategy    string `json:"strategy"`
	BorrowLimit *int   `json:"borrowLimit,omitempty"`
}

// QuotaSharePreemptionConfiguration turns in-share preemption on or off.
type QuotaSharePreemptionConfiguration struct {
	InSharePreemption string `json:"inSharePreemption"`
}

// QuotaShare is a quota share of a job queue.
type QuotaShare struct {
	QuotaShareName               string                            `json:"quotaShareName"`
	QuotaShareArn                string                            `json:"quotaShareArn"`
	JobQueueArn                  string                            `json:"jobQueueArn"`
	CapacityLimits               []CapacityLimit                   `json:"capacityLimits"`
	ResourceSharingConfiguration ResourceSharingConfiguration      `json:"resourceSharingConfiguration"`
	PreemptionConfiguration      QuotaSharePreemptionConfiguration `json:"preemptionConfiguration"`
	State                        string                            `json:"state"`
	Status                       string                            `json:"status"`
	Tags                         map[string]string                 `json:"tags,omitempty"`
}

// EvaluateOnExit is one retry rule.
type EvaluateOnExit struct {
	Action         string `json:"action"`
	OnStatusReason string `json:"onStatusReason,omitempty"`
}

// RetryStrategy is a job's retry strategy.
type RetryStrategy struct {
	Attempts       int              `json:"attempts"`
	EvaluateOnExit []EvaluateOnExit `json:"evaluateOnExit,omitempty"`
}

// TimeoutConfig bounds an attempt's duration.
type TimeoutConfig struct {
	AttemptDurationSeconds int `json:"attemptDurationSeconds,omitempty"`
}

// JobPreemptionConfiguration bounds how often a job may be preempted.
type JobPreemptionConfiguration struct {
	PreemptionRetriesBeforeTermination *int `json:"preemptionRetriesBeforeTermination,omitempty"`
}

// ServiceResourceID names the training job of an attempt.
type ServiceResourceID struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Attempt is one try of a service job.
type Attempt struct {
	ServiceResourceID ServiceResourceID `json:"serviceResourceId"`
	StartedAt         int64             `json:"startedAt,omitempty"`
	StoppedAt         int64             `json:"stoppedAt,omitempty"`
	StatusReason      string            `json:"statusReason,omitempty"`
}

// LatestAttempt points at the current attempt's training job.
type LatestAttempt struct {
	ServiceResourceID ServiceResourceID `json:"serviceResourceId"`
}

// PreemptionSummary counts preemptions; recent ones newest first.
type PreemptionSummary struct {
	PreemptedAttemptCount   int       `json:"preemptedAttemptCount"`
	RecentPreemptedAttempts []Attempt `json:"recentPreemptedAttempts"`
}

// ServiceJob is a service job (DescribeServiceJob's output).
type ServiceJob struct {
	JobID                   string                      `json:"jobId"`
	JobName                 string                      `json:"jobName"`
	JobArn                  string                      `json:"jobArn"`
	JobQueue                string                      `json:"jobQueue"`
	ServiceJobType          string                      `json:"serviceJobType"`
	Status                  string                      `json:"status"`
	StatusReason            string                      `json:"statusReason,omitempty"`
	CreatedAt               int64                       `json:"createdAt"`
	ScheduledAt             int64                       `json:"scheduledAt,omitempty"`
	StartedAt               int64                       `json:"startedAt"`
	StoppedAt               int64                       `json:"stoppedAt,omitempty"`
	SchedulingPriority      int                         `json:"schedulingPriority"`
	QuotaShareName          string                      `json:"quotaShareName,omitempty"`
	ShareIdentifier         string                      `json:"shareIdentifier,omitempty"`
	IsTerminated            bool                        `json:"isTerminated,omitempty"`
	ServiceRequestPayload   string                      `json:"serviceRequestPayload,omitempty"`
	RetryStrategy           *RetryStrategy              `json:"retryStrategy,omitempty"`
	TimeoutConfig           *TimeoutConfig              `json:"timeoutConfig,omitempty"`
	PreemptionConfiguration *JobPreemptionConfiguration `json:"preemptionConfiguration,omitempty"`
	Tags                    map[string]string           `json:"tags,omitempty"`
	CapacityUsage           []CapacityUsage             `json:"capacityUsage"`
	Attempts                []Attempt                   `json:"attempts,omitempty"`
	LatestAttempt           *LatestAttempt              `json:"latestAttempt,omitempty"`
	PreemptionSummary       *PreemptionSummary          `json:"preemptionSummary,omitempty"`
}

// QueueSnapshot is GetJobQueueSnapshot's output.
type QueueSnapshot struct {
	FrontOfQueue       *FrontOfQueue       `json:"frontOfQueue,omitempty"`
	FrontOfQuotaShares *FrontOfQuotaShares `json:"frontOfQuotaShares,omitempty"`
	QueueUtilization   *QueueUtilization   `json:"queueUtilization,omitempty"`
}

// FrontOfQueueJob is a RUNNABLE job at the front.
type FrontOfQueueJob struct {
	JobArn                 string `json:"jobArn"`
	EarliestTimeAtPosition int64  `json:"earliestTimeAtPosition,omitempty"`
}

type FrontOfQueue struct {
	Jobs          []FrontOfQueueJob `json:"jobs"`
	LastUpdatedAt int64             `json:"lastUpdatedAt"`
}

type FrontOfQuotaShares struct {
	QuotaShares   map[string][]FrontOfQueueJob `json:"quotaShares"`
	LastUpdatedAt int64                        `json:"lastUpdatedAt"`
}

type QueueUtilization struct {
	TotalCapacityUsage    []CapacityUsage        `json:"totalCapacityUsage"`
	QuotaShareUtilization *QuotaShareUtilization `json:"quotaShareUtilization,omitempty"`
	LastUpdatedAt         int64                  `json:"lastUpdatedAt"`
}

type QuotaShareUtilization struct {
	TopCapacityUtilization []QuotaShareCapacity `json:"topCapacityUtilization"`
}

type QuotaShareCapacity struct {
	QuotaShareName string          `json:"quotaShareName"`
	CapacityUsage  []CapacityUsage `json:"capacityUsage"`
}
