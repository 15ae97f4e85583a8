// Package clusterconfig is the declarative set-up of a sharq cluster: the
// scheduling policies, service environments, job queues and quota shares
// that `sharq apply -f` creates on a server and `sharq sim --config` creates
// in a simulation. It holds the YAML schema (field names follow the AWS
// Batch API's), its parser and checks, and Apply, which creates the
// resources on an engine through its Create* operations.
//
// Example (examples/announcement.yaml):
//
//	schedulingPolicies:
//	  - name: my-qm-scheduling-policy
//	    quotaSharePolicy: {idleResourceAssignmentStrategy: FIFO}
//	serviceEnvironments:
//	  - name: my-sm-training-qm-se
//	    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]
//	jobQueues:
//	  - name: my-sm-training-qm-jq
//	    priority: 1
//	    schedulingPolicy: my-qm-scheduling-policy
//	    serviceEnvironments: [my-sm-training-qm-se]
//	    quotaShares:
//	      - name: QS1
//	        capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
//	        resourceSharingConfiguration: {strategy: LEND_AND_BORROW, borrowLimit: 200}
//	        preemptionConfiguration: {inSharePreemption: ENABLED}
//	        sharq: {minimumRuntimeSeconds: 300} # sharq's own, not AWS's
package clusterconfig

import "time"

// Config is a whole cluster set-up. Resources refer to each other by name.
type Config struct {
	SchedulingPolicies  []SchedulingPolicy   `yaml:"schedulingPolicies" json:"schedulingPolicies"`
	ServiceEnvironments []ServiceEnvironment `yaml:"serviceEnvironments" json:"serviceEnvironments"`
	JobQueues           []JobQueue           `yaml:"jobQueues" json:"jobQueues"`
	// AccessPolicies are what access keys may do (sharq apply only; the
	// simulator ignores them).
	AccessPolicies []AccessPolicy `yaml:"accessPolicies,omitempty" json:"accessPolicies,omitempty"`
}

// SchedulingPolicy is a scheduling policy. A quota-share policy makes the
// queues that use it schedule by quota share.
type SchedulingPolicy struct {
	Name             string            `yaml:"name" json:"name"`
	QuotaSharePolicy *QuotaSharePolicy `yaml:"quotaSharePolicy,omitempty" json:"quotaSharePolicy,omitempty"`
	// FairsharePolicy makes the queues that use it fair-share queues
	// (docs/fair-share.md); a policy has at most one of the two.
	FairsharePolicy *FairsharePolicy  `yaml:"fairsharePolicy,omitempty" json:"fairsharePolicy,omitempty"`
	Tags            map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// FairsharePolicy is a scheduling policy's fair-share part, in AWS's shape.
type FairsharePolicy struct {
	ShareDecaySeconds  int               `yaml:"shareDecaySeconds,omitempty" json:"shareDecaySeconds,omitempty"`
	ComputeReservation int               `yaml:"computeReservation,omitempty" json:"computeReservation,omitempty"`
	ShareDistribution  []ShareAttributes `yaml:"shareDistribution,omitempty" json:"shareDistribution,omitempty"`
}

// ShareAttributes is the weight of a share identifier, or of every one
// starting with a prefix when it ends in '*'.
type ShareAttributes struct {
	ShareIdentifier string   `yaml:"shareIdentifier" json:"shareIdentifier"`
	WeightFactor    *float64 `yaml:"weightFactor,omitempty" json:"weightFactor,omitempty"`
}

// QuotaSharePolicy is a scheduling policy's quota-share part.
type QuotaSharePolicy struct {
	// IdleResourceAssignmentStrategy is FIFO, the only one AWS offers
	// (default FIFO).
	IdleResourceAssignmentStrategy string `yaml:"idleResourceAssignmentStrategy,omitempty" json:"idleResourceAssignmentStrategy,omitempty"`
}

// ServiceEnvironment is a pool of capacity.
type ServiceEnvironment struct {
	Name           string            `yaml:"name" json:"name"`
	Type           string            `yaml:"type,omitempty" json:"type,omitempty"`   // default SAGEMAKER_TRAINING
	State          string            `yaml:"state,omitempty" json:"state,omitempty"` // default ENABLED
	CapacityLimits []CapacityLimit   `yaml:"capacityLimits" json:"capacityLimits"`
	Tags           map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// CapacityLimit is a maximum number of instances of one type.
type CapacityLimit struct {
	CapacityUnit string `yaml:"capacityUnit" json:"capacityUnit"`
	MaxCapacity  int    `yaml:"maxCapacity" json:"maxCapacity"`
}

// JobQueue is a job queue and its quota shares.
type JobQueue struct {
	Name     string `yaml:"name" json:"name"`
	Priority int    `yaml:"priority,omitempty" json:"priority,omitempty"`
	State    string `yaml:"state,omitempty" json:"state,omitempty"` // default ENABLED
	// SchedulingPolicy names a policy of this file; empty for a FIFO queue.
	SchedulingPolicy string `yaml:"schedulingPolicy,omitempty" json:"schedulingPolicy,omitempty"`
	// ServiceEnvironments names environments of this file in order (order
	// 1, 2, ...). A quota-share queue has exactly one.
	ServiceEnvironments      []string                  `yaml:"serviceEnvironments" json:"serviceEnvironments"`
	JobStateTimeLimitActions []JobStateTimeLimitAction `yaml:"jobStateTimeLimitActions,omitempty" json:"jobStateTimeLimitActions,omitempty"`
	QuotaShares              []QuotaShare              `yaml:"quotaShares,omitempty" json:"quotaShares,omitempty"`
	Tags                     map[string]string         `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// JobStateTimeLimitAction cancels a RUNNABLE head that has waited too long
// for a reason (AWS's jobStateTimeLimitActions).
type JobStateTimeLimitAction struct {
	Reason         string `yaml:"reason" json:"reason"`
	State          string `yaml:"state,omitempty" json:"state,omitempty"`   // default RUNNABLE
	Action         string `yaml:"action,omitempty" json:"action,omitempty"` // default TERMINATE
	MaxTimeSeconds int    `yaml:"maxTimeSeconds" json:"maxTimeSeconds"`
}

// QuotaShare is a quota share of its job queue.
type QuotaShare struct {
	Name                         string                       `yaml:"name" json:"name"`
	State                        string                       `yaml:"state,omitempty" json:"state,omitempty"` // default ENABLED
	CapacityLimits               []CapacityLimit              `yaml:"capacityLimits" json:"capacityLimits"`
	ResourceSharingConfiguration ResourceSharingConfiguration `yaml:"resourceSharingConfiguration" json:"resourceSharingConfiguration"`
	PreemptionConfiguration      PreemptionConfiguration      `yaml:"preemptionConfiguration,omitempty" json:"preemptionConfiguration,omitempty"`
	Tags                         map[string]string            `yaml:"tags,omitempty" json:"tags,omitempty"`
	// Sharq holds the share's settings that are sharq's own: AWS's API has
	// no field for them.
	Sharq *ShareSettings `yaml:"sharq,omitempty" json:"sharq,omitempty"`
}

// ShareSettings are a quota share's settings beyond AWS Batch's.
type ShareSettings struct {
	// MinimumRuntimeSeconds: a dispatched job of the share younger than
	// this is not preempted, in-share or cross-share (0, the default: no
	// minimum). See docs/scheduling-minimum-runtime.md.
	MinimumRuntimeSeconds int `yaml:"minimumRuntimeSeconds,omitempty" json:"minimumRuntimeSeconds,omitempty"`
}

// MinimumRuntime is the share's minimum runtime before preemption (0:
// none).
func (s *QuotaShare) MinimumRuntime() time.Duration {
	if s.Sharq == nil {
		return 0
	}
	return time.Duration(s.Sharq.MinimumRuntimeSeconds) * time.Second
}

// ResourceSharingConfiguration is a share's strategy: RESERVE, LEND or
// LEND_AND_BORROW. BorrowLimit (percent of the share's limits, -1 for no
// cap, the default) is only for LEND_AND_BORROW.
type ResourceSharingConfiguration struct {
	Strategy    string `yaml:"strategy" json:"strategy"`
	BorrowLimit *int   `yaml:"borrowLimit,omitempty" json:"borrowLimit,omitempty"`
}

// PreemptionConfiguration turns in-share preemption on (ENABLED) or off
// (DISABLED, the default).
type PreemptionConfiguration struct {
	InSharePreemption string `yaml:"inSharePreemption,omitempty" json:"inSharePreemption,omitempty"`
}

// SetMinimumRuntime gives every quota share the minimum runtime before
// preemption d (whole seconds; 0: none), as `sharq sim --min-runtime` does
// to compare minimums on one workload.
func (c *Config) SetMinimumRuntime(d time.Duration) {
	for i := range c.JobQueues {
		for k := range c.JobQueues[i].QuotaShares {
			s := &c.JobQueues[i].QuotaShares[k]
			if s.Sharq == nil {
				s.Sharq = &ShareSettings{}
			}
			s.Sharq.MinimumRuntimeSeconds = int(d / time.Second)
		}
	}
}

// MaxShares is the largest number of quota shares of any queue, which the
// engine's MaxSharesPerQueue must allow.
func (c *Config) MaxShares() int {
	n := 0
	for _, q := range c.JobQueues {
		n = max(n, len(q.QuotaShares))
	}
	return n
}

// Queue returns the queue named name, or nil.
func (c *Config) Queue(name string) *JobQueue {
	for i := range c.JobQueues {
		if c.JobQueues[i].Name == name {
			return &c.JobQueues[i]
		}
	}
	return nil
}

// Policy returns the scheduling policy named name, or nil.
func (c *Config) Policy(name string) *SchedulingPolicy {
	for i := range c.SchedulingPolicies {
		if c.SchedulingPolicies[i].Name == name {
			return &c.SchedulingPolicies[i]
		}
	}
	return nil
}

// Env returns the service environment named name, or nil.
func (c *Config) Env(name string) *ServiceEnvironment {
	for i := range c.ServiceEnvironments {
		if c.ServiceEnvironments[i].Name == name {
			return &c.ServiceEnvironments[i]
		}
	}
	return nil
}

// QuotaQueue tells whether the queue schedules by quota share.
func (c *Config) QuotaQueue(q *JobQueue) bool {
	p := c.Policy(q.SchedulingPolicy)
	return p != nil && p.QuotaSharePolicy != nil
}

// FairQueue tells whether q's scheduling policy has a fairsharePolicy.
func (c *Config) FairQueue(q *JobQueue) bool {
	p := c.Policy(q.SchedulingPolicy)
	return p != nil && p.FairsharePolicy != nil
}
