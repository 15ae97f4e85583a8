package batchapi

import (
	"context"
	"encoding/json"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

type serviceEnvironmentOrder struct {
	Order              *int   `json:"order"`
	ServiceEnvironment string `json:"serviceEnvironment"`
}

type jobStateTimeLimitAction struct {
	Action         string `json:"action"`
	MaxTimeSeconds *int   `json:"maxTimeSeconds"`
	Reason         string `json:"reason"`
	State          string `json:"state"`
}

type createJobQueueRequest struct {
	JobQueueName             string                    `json:"jobQueueName"`
	State                    string                    `json:"state"`
	SchedulingPolicyArn      string                    `json:"schedulingPolicyArn"`
	Priority                 *int                      `json:"priority"`
	ComputeEnvironmentOrder  []json.RawMessage         `json:"computeEnvironmentOrder"`
	ServiceEnvironmentOrder  []serviceEnvironmentOrder `json:"serviceEnvironmentOrder"`
	JobQueueType             string                    `json:"jobQueueType"`
	Tags                     map[string]string         `json:"tags"`
	JobStateTimeLimitActions []jobStateTimeLimitAction `json:"jobStateTimeLimitActions"`
}

type updateJobQueueRequest struct {
	JobQueue                 string                    `json:"jobQueue"`
	State                    string                    `json:"state"`
	SchedulingPolicyArn      string                    `json:"schedulingPolicyArn"`
	Priority                 *int                      `json:"priority"`
	ComputeEnvironmentOrder  []json.RawMessage         `json:"computeEnvironmentOrder"`
	ServiceEnvironmentOrder  []serviceEnvironmentOrder `json:"serviceEnvironmentOrder"`
	JobStateTimeLimitActions []jobStateTimeLimitAction `json:"jobStateTimeLimitActions"`
}

type jobQueueRequest struct {
	JobQueue string `json:"jobQueue"`
}

type describeJobQueuesRequest struct {
	JobQueues []string `json:"jobQueues"`
	pageRequest
}

// jobQueueRef is the output of Create and Update.
type jobQueueRef struct {
	JobQueueArn  string `json:"jobQueueArn"`
	JobQueueName string `json:"jobQueueName"`
}

// The reasons a SageMaker queue's time-limit action may act on.
var timeLimitReasons = []string{
	"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY",
	"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
	"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
}

const maxInt32 = 1<<31 - 1

func (s *Handler) createJobQueue(ctx context.Context, in *createJobQueueRequest) (any, error) {
	var c check
	c.name("jobQueueName", in.JobQueueName)
	if present(&c, "priority", in.Priority) {
		c.between("priority", in.Priority, 0, maxInt32)
	}
	c.jobQueueType(in.JobQueueType)
	c.enum("state", in.State, "ENABLED", "DISABLED")
	if in.SchedulingPolicyArn != "" {
		c.arnOf("schedulingPolicyArn", in.SchedulingPolicyArn, arn.SchedulingPolicy)
	}
	c.noComputeEnvironments(in.ComputeEnvironmentOrder)
	if in.ServiceEnvironmentOrder == nil {
		c.failf("serviceEnvironmentOrder is required")
	}
	order := c.serviceEnvironmentOrder(in.ServiceEnvironmentOrder, 1)
	actions := c.timeLimitActions(in.JobStateTimeLimitActions)
	c.tags("tags", in.Tags)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:CreateJobQueue", s.base.JobQueue(in.JobQueueName)); err != nil {
		return nil, err
	}
	q, err := s.eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{
		Name: in.JobQueueName, Priority: *in.Priority, Type: in.JobQueueType,
		ServiceEnvironmentOrder: order, SchedulingPolicyArn: in.SchedulingPolicyArn, State: in.State,
		JobStateTimeLimitActions: actions, ComputeEnvironmentOrder: in.ComputeEnvironmentOrder, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return jobQueueRef{q.JobQueueArn, q.JobQueueName}, nil
}

func (s *Handler) updateJobQueue(ctx context.Context, in *updateJobQueueRequest) (any, error) {
	var c check
	c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue)
	c.enum("state", in.State, "ENABLED", "DISABLED")
	if in.SchedulingPolicyArn != "" {
		c.arnOf("schedulingPolicyArn", in.SchedulingPolicyArn, arn.SchedulingPolicy)
	}
	c.between("priority", in.Priority, 0, maxInt32)
	c.noComputeEnvironments(in.ComputeEnvironmentOrder)
	// An empty list is syntactically fine; whether a queue may lose its
	// service environment is the engine's rule.
	order := c.serviceEnvironmentOrder(in.ServiceEnvironmentOrder, 0)
	actions := c.timeLimitActions(in.JobStateTimeLimitActions)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:UpdateJobQueue", s.base.Of(arn.JobQueue, in.JobQueue)); err != nil {
		return nil, err
	}
	q, err := s.eng.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{
		JobQueue: in.JobQueue, State: in.State, SchedulingPolicyArn: in.SchedulingPolicyArn,
		Priority: in.Priority, ServiceEnvironmentOrder: order,
		JobStateTimeLimitActions: actions, ComputeEnvironmentOrder: in.ComputeEnvironmentOrder,
	})
	if err != nil {
		return nil, err
	}
	return jobQueueRef{q.JobQueueArn, q.JobQueueName}, nil
}

func (s *Handler) deleteJobQueue(ctx context.Context, in *jobQueueRequest) (any, error) {
	var c check
	if c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DeleteJobQueue", s.base.Of(arn.JobQueue, in.JobQueue)); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.DeleteJobQueue(ctx, in.JobQueue)
}

func (s *Handler) describeJobQueues(ctx context.Context, in *describeJobQueuesRequest) (any, error) {
	var c check
	c.count("jobQueues", len(in.JobQueues), 0, maxListItems)
	for i, q := range in.JobQueues {
		c.nameOrARN(at("jobQueues", i), q, arn.JobQueue)
	}
	page := c.page(in.pageRequest)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DescribeJobQueues", access.AnyResource); err != nil {
		return nil, err
	}
	qs, next, err := s.eng.DescribeJobQueues(ctx, in.JobQueues, page)
	if err != nil {
		return nil, err
	}
	return struct {
		JobQueues []JobQueue `json:"jobQueues"`
		NextToken string     `json:"nextToken,omitempty"`
	}{orEmpty(each(qs, JobQueueOf)), next}, nil
}

func (c *check) jobQueueType(t string) {
	if t != "" && t != sageMakerTraining {
		c.failf("jobQueueType %q is not supported: only %s job queues can be created", t, sageMakerTraining)
	}
}

// noComputeEnvironments rejects compute environments: sharq's queues
// are service queues. PySDK sends an empty list, which is fine.
func (c *check) noComputeEnvironments(ces []json.RawMessage) {
	if len(ces) > 0 {
		c.failf("computeEnvironmentOrder must be empty: a %s job queue uses serviceEnvironmentOrder", sageMakerTraining)
	}
}

// serviceEnvironmentOrder checks the queue's service environments; a
// queue has at most one. nil stays nil (unchanged, on update).
func (c *check) serviceEnvironmentOrder(orders []serviceEnvironmentOrder, least int) []record.ServiceEnvironmentOrder {
	if orders == nil {
		return nil
	}
	c.count("serviceEnvironmentOrder", len(orders), least, 1)
	out := make([]record.ServiceEnvironmentOrder, len(orders))
	for i, o := range orders {
		f := at("serviceEnvironmentOrder", i)
		if present(c, f+".order", o.Order) {
			c.between(f+".order", o.Order, 0, maxInt32)
			out[i].Order = *o.Order
		}
		c.nameOrARN(f+".serviceEnvironment", o.ServiceEnvironment, arn.ServiceEnvironment)
		out[i].ServiceEnvironment = o.ServiceEnvironment
	}
	return out
}

// timeLimitActions checks the actions on jobs stuck at the head of a
// SageMaker queue. nil stays nil (unchanged, on update); empty clears.
func (c *check) timeLimitActions(as []jobStateTimeLimitAction) []record.JobStateTimeLimitAction {
	if as == nil {
		return nil
	}
	out := make([]record.JobStateTimeLimitAction, len(as))
	for i, a := range as {
		f := at("jobStateTimeLimitActions", i)
		c.required(f+".reason", a.Reason)
		c.enum(f+".reason", a.Reason, timeLimitReasons...)
		c.required(f+".state", a.State)
		c.enum(f+".state", a.State, "RUNNABLE")
		if present(c, f+".maxTimeSeconds", a.MaxTimeSeconds) {
			c.between(f+".maxTimeSeconds", a.MaxTimeSeconds, 600, 86400)
			out[i].MaxTimeSeconds = *a.MaxTimeSeconds
		}
		c.required(f+".action", a.Action)
		c.enum(f+".action", a.Action, "TERMINATE")
		out[i].Action, out[i].Reason, out[i].State = a.Action, a.Reason, a.State
	}
	return out
}
