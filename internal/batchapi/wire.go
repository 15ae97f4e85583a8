package batchapi

import (
	"encoding/json"
	"time"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/record"
)

// The AWS Batch API's output shapes (lowerCamelCase JSON, timestamps as
// epoch milliseconds), made from the stored records. Lists and maps that
// AWS always sends are never null.

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

// SchedulingPolicy is SchedulingPolicyDetail.
type SchedulingPolicy struct {
	Arn              string            `json:"arn"`
	Name             string            `json:"name"`
	QuotaSharePolicy *QuotaSharePolicy `json:"quotaSharePolicy,omitempty"`
	FairsharePolicy  json.RawMessage   `json:"fairsharePolicy,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// ServiceEnvironment is ServiceEnvironmentDetail.
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

// JobQueue is JobQueueDetail.
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

// QuotaShare is DescribeQuotaShare's output.
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

// ServiceJob is DescribeServiceJob's output.
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

// Event is the "Batch Service Job State Change" event: an EventBridge
// event whose detail is the job as DescribeServiceJob shows it.
type Event struct {
	Version    string     `json:"version"`
	ID         string     `json:"id"`
	DetailType string     `json:"detail-type"`
	Source     string     `json:"source"`
	Account    string     `json:"account"`
	Time       string     `json:"time"`
	Region     string     `json:"region"`
	Resources  []string   `json:"resources"`
	Detail     ServiceJob `json:"detail"`
}

// EventOf is ev as AWS Batch sends it, from the account and region of b.
func EventOf(ev jobevents.Event, b arn.Base) Event {
	return Event{
		Version: "0", ID: ev.ID, DetailType: "Batch Service Job State Change", Source: "aws.batch",
		Account: b.AccountID, Region: b.Region, Time: time.UnixMilli(ev.At).UTC().Format(time.RFC3339Nano),
		Resources: []string{ev.Job.JobArn}, Detail: ServiceJobOf(ev.Job),
	}
}

// EventsOf is EventOf for each of evs.
func EventsOf(evs []jobevents.Event, b arn.Base) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = EventOf(ev, b)
	}
	return out
}

func each[From, To any](in []From, f func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func capacityLimitsOf(ls []record.CapacityLimit) []CapacityLimit {
	return orEmpty(each(ls, func(l record.CapacityLimit) CapacityLimit { return CapacityLimit(l) }))
}

// CapacityUsageOf is a record's capacity in use, never nil.
func CapacityUsageOf(us []record.CapacityUsage) []CapacityUsage {
	return orEmpty(each(us, func(u record.CapacityUsage) CapacityUsage { return CapacityUsage(u) }))
}

func schedulingPolicyOf(p record.SchedulingPolicy) SchedulingPolicy {
	out := SchedulingPolicy{Arn: p.Arn, Name: p.Name, FairsharePolicy: p.FairsharePolicy, Tags: p.Tags}
	if qp := p.QuotaSharePolicy; qp != nil {
		out.QuotaSharePolicy = &QuotaSharePolicy{IdleResourceAssignmentStrategy: qp.IdleResourceAssignmentStrategy}
	}
	return out
}

func serviceEnvironmentOf(se record.ServiceEnvironment) ServiceEnvironment {
	return ServiceEnvironment{
		ServiceEnvironmentName: se.ServiceEnvironmentName, ServiceEnvironmentArn: se.ServiceEnvironmentArn,
		ServiceEnvironmentType: se.ServiceEnvironmentType, State: se.State, Status: se.Status,
		CapacityLimits: capacityLimitsOf(se.CapacityLimits), Tags: se.Tags,
	}
}

// JobQueueOf is JobQueueDetail, with the lists and map AWS always sends
// (computeEnvironmentOrder is even required by clients).
func JobQueueOf(q record.JobQueue) JobQueue {
	tags := q.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return JobQueue{
		JobQueueName: q.JobQueueName, JobQueueArn: q.JobQueueArn, State: q.State,
		SchedulingPolicyArn: q.SchedulingPolicyArn, Status: q.Status, StatusReason: q.StatusReason, Priority: q.Priority,
		ComputeEnvironmentOrder: orEmpty(q.ComputeEnvironmentOrder),
		ServiceEnvironmentOrder: orEmpty(each(q.ServiceEnvironmentOrder, func(o record.ServiceEnvironmentOrder) ServiceEnvironmentOrder {
			return ServiceEnvironmentOrder(o)
		})),
		JobQueueType: q.JobQueueType, Tags: tags,
		JobStateTimeLimitActions: orEmpty(each(q.JobStateTimeLimitActions, func(a record.JobStateTimeLimitAction) JobStateTimeLimitAction {
			return JobStateTimeLimitAction(a)
		})),
	}
}

func quotaShareOf(s record.QuotaShare) QuotaShare {
	return QuotaShare{
		QuotaShareName: s.QuotaShareName, QuotaShareArn: s.QuotaShareArn, JobQueueArn: s.JobQueueArn,
		CapacityLimits:               capacityLimitsOf(s.CapacityLimits),
		ResourceSharingConfiguration: ResourceSharingConfiguration(s.ResourceSharingConfiguration),
		PreemptionConfiguration:      QuotaSharePreemptionConfiguration(s.PreemptionConfiguration),
		State:                        s.State, Status: s.Status, Tags: s.Tags,
	}
}

func attemptOf(a record.Attempt) Attempt {
	return Attempt{ServiceResourceID: ServiceResourceID(a.ServiceResourceID), StartedAt: a.StartedAt, StoppedAt: a.StoppedAt, StatusReason: a.StatusReason}
}

// ServiceJobOf is DescribeServiceJob's output for a job.
func ServiceJobOf(j record.Job) ServiceJob {
	out := ServiceJob{
		JobID: j.JobID, JobName: j.JobName, JobArn: j.JobArn, JobQueue: j.JobQueue, ServiceJobType: j.ServiceJobType,
		Status: j.Status, StatusReason: j.StatusReason, CreatedAt: j.CreatedAt, ScheduledAt: j.ScheduledAt,
		StartedAt: j.StartedAt, StoppedAt: j.StoppedAt, SchedulingPriority: j.SchedulingPriority,
		QuotaShareName: j.QuotaShareName, ShareIdentifier: j.ShareIdentifier, IsTerminated: j.IsTerminated,
		ServiceRequestPayload: j.ServiceRequestPayload, Tags: j.Tags, CapacityUsage: CapacityUsageOf(j.CapacityUsage),
		Attempts: each(j.Attempts, attemptOf), LatestAttempt: latestAttemptOf(j.LatestAttempt),
	}
	if rs := j.RetryStrategy; rs != nil {
		out.RetryStrategy = &RetryStrategy{Attempts: rs.Attempts, EvaluateOnExit: each(rs.EvaluateOnExit, func(e record.EvaluateOnExit) EvaluateOnExit {
			return EvaluateOnExit(e)
		})}
	}
	if tc := j.TimeoutConfig; tc != nil {
		out.TimeoutConfig = &TimeoutConfig{AttemptDurationSeconds: tc.AttemptDurationSeconds}
	}
	if pc := j.PreemptionConfiguration; pc != nil {
		out.PreemptionConfiguration = &JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: pc.PreemptionRetriesBeforeTermination}
	}
	if ps := j.PreemptionSummary; ps != nil {
		out.PreemptionSummary = &PreemptionSummary{
			PreemptedAttemptCount:   ps.PreemptedAttemptCount,
			RecentPreemptedAttempts: orEmpty(each(ps.RecentPreemptedAttempts, attemptOf)),
		}
	}
	return out
}

func latestAttemptOf(la *record.LatestAttempt) *LatestAttempt {
	if la == nil {
		return nil
	}
	return &LatestAttempt{ServiceResourceID: ServiceResourceID(la.ServiceResourceID)}
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

// SnapshotOf is GetJobQueueSnapshot's output; a share with no RUNNABLE
// job shows as [], as in AWS's example.
func SnapshotOf(s engine.QueueSnapshot) QueueSnapshot {
	front := func(js []engine.FrontJob) []FrontOfQueueJob {
		return orEmpty(each(js, func(j engine.FrontJob) FrontOfQueueJob {
			return FrontOfQueueJob{JobArn: j.JobArn, EarliestTimeAtPosition: j.CreatedAt}
		}))
	}
	out := QueueSnapshot{
		FrontOfQueue:     &FrontOfQueue{Jobs: front(s.Front), LastUpdatedAt: s.At},
		QueueUtilization: &QueueUtilization{TotalCapacityUsage: CapacityUsageOf(s.Total), LastUpdatedAt: s.At},
	}
	if s.Quota {
		fq := &FrontOfQuotaShares{QuotaShares: map[string][]FrontOfQueueJob{}, LastUpdatedAt: s.At}
		for name, js := range s.ShareFronts {
			fq.QuotaShares[name] = front(js)
		}
		out.FrontOfQuotaShares = fq
		out.QueueUtilization.QuotaShareUtilization = &QuotaShareUtilization{
			TopCapacityUtilization: orEmpty(each(s.Shares, func(c engine.ShareCapacity) QuotaShareCapacity {
				return QuotaShareCapacity{QuotaShareName: c.Share, CapacityUsage: CapacityUsageOf(c.Usage)}
			})),
		}
	}
	return out
}
