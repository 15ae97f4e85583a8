package record

import "encoding/json"

// CapacityLimit is the most of one capacity unit (an instance type) a
// service environment or quota share may hold.
type CapacityLimit struct {
	CapacityUnit string `json:"unit"`
	MaxCapacity  int    `json:"max"`
}

// CapacityUsage is a quantity of one capacity unit in use.
type CapacityUsage struct {
	CapacityUnit string  `json:"unit"`
	Quantity     float64 `json:"qty"`
}

// QuotaSharePolicy is a scheduling policy's quota-share part.
type QuotaSharePolicy struct {
	IdleResourceAssignmentStrategy string `json:"idleStrategy"`
}

// SchedulingPolicy is a scheduling policy.
type SchedulingPolicy struct {
	Arn              string            `json:"arn"`
	Name             string            `json:"name"`
	QuotaSharePolicy *QuotaSharePolicy `json:"quotaShare,omitempty"`
	// FairsharePolicy is kept as the client sent it: fair-share queues are
	// stored, not scheduled.
	FairsharePolicy json.RawMessage   `json:"fairshare,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// ServiceEnvironment is a pool of capacity.
type ServiceEnvironment struct {
	ServiceEnvironmentName string            `json:"name"`
	ServiceEnvironmentArn  string            `json:"arn"`
	ServiceEnvironmentType string            `json:"type"`
	State                  string            `json:"state"`
	Status                 string            `json:"status"`
	CapacityLimits         []CapacityLimit   `json:"limits"`
	Tags                   map[string]string `json:"tags,omitempty"`
}

// ServiceEnvironmentOrder attaches a service environment to a queue.
type ServiceEnvironmentOrder struct {
	Order              int    `json:"order"`
	ServiceEnvironment string `json:"env"`
}

// JobStateTimeLimitAction terminates a queue's head that waits too long.
type JobStateTimeLimitAction struct {
	Action         string `json:"action"`
	MaxTimeSeconds int    `json:"maxSeconds"`
	Reason         string `json:"reason"`
	State          string `json:"state"`
}

// JobQueue is a job queue.
type JobQueue struct {
	JobQueueName        string `json:"name"`
	JobQueueArn         string `json:"arn"`
	State               string `json:"state"`
	SchedulingPolicyArn string `json:"policyArn,omitempty"`
	Status              string `json:"status"`
	StatusReason        string `json:"statusReason,omitempty"`
	Priority            int    `json:"priority"`
	// ComputeEnvironmentOrder is kept as the client sent it (always empty
	// for the SAGEMAKER_TRAINING queues sharq schedules).
	ComputeEnvironmentOrder  []json.RawMessage         `json:"computeEnvs,omitempty"`
	ServiceEnvironmentOrder  []ServiceEnvironmentOrder `json:"envs"`
	JobQueueType             string                    `json:"type,omitempty"`
	Tags                     map[string]string         `json:"tags,omitempty"`
	JobStateTimeLimitActions []JobStateTimeLimitAction `json:"timeLimits,omitempty"`
}

// ResourceSharingConfiguration is a quota share's strategy.
type ResourceSharingConfiguration struct {
	Strategy    string `json:"strategy"`
	BorrowLimit *int   `json:"borrowLimit,omitempty"`
}

// QuotaSharePreemptionConfiguration turns in-share preemption on or off.
type QuotaSharePreemptionConfiguration struct {
	InSharePreemption string `json:"inShare"`
}

// QuotaShare is a quota share of a job queue.
type QuotaShare struct {
	QuotaShareName               string                            `json:"name"`
	QuotaShareArn                string                            `json:"arn"`
	JobQueueArn                  string                            `json:"queueArn"`
	CapacityLimits               []CapacityLimit                   `json:"limits"`
	ResourceSharingConfiguration ResourceSharingConfiguration      `json:"sharing"`
	PreemptionConfiguration      QuotaSharePreemptionConfiguration `json:"preemption"`
	State                        string                            `json:"state"`
	Status                       string                            `json:"status"`
	Tags                         map[string]string                 `json:"tags,omitempty"`
	// MinimumRuntimeSeconds is sharq's own setting (AWS's API has no such
	// field, and the wire never shows it): a dispatched job of the share
	// younger than this is not preempted. 0: none.
	MinimumRuntimeSeconds int `json:"minRuntime,omitempty"`
}
