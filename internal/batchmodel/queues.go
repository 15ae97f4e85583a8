package batchmodel

import (
	"encoding/json"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

func putQueue(q *Queue) Put {
	return Put{Kind: KindQueue, ARN: q.JobQueueArn, Record: &q.JobQueue}
}

// queueEnv resolves a queue's service environment order: exactly one
// SAGEMAKER_TRAINING environment, which a quota-share or fair-share queue
// (exclusive) must not share.
func (m *Model) queueEnv(q *Queue, order []record.ServiceEnvironmentOrder, exclusive bool) (*Env, error) {
	if len(order) != 1 {
		return nil, invalidf("A SAGEMAKER_TRAINING job queue requires exactly one service environment in serviceEnvironmentOrder")
	}
	se, err := m.findEnv(order[0].ServiceEnvironment)
	if err != nil {
		return nil, err
	}
	for _, o := range m.Queues() {
		if o != q && o.env == se.ServiceEnvironmentName && (exclusive || o.quota || m.FairQueue(o)) {
			if !o.quota && !q.quota {
				return nil, conflictf("Service environment %s is already connected to job queue %s; a service environment of a fair-share job queue can be connected to only one job queue", se.ServiceEnvironmentName, o.JobQueueName)
			}
			return nil, conflictf("Service environment %s is already connected to job queue %s; a quota management service environment can be connected to only one job queue", se.ServiceEnvironmentName, o.JobQueueName)
		}
	}
	return se, nil
}

// CreateJobQueue makes a SAGEMAKER_TRAINING job queue on one service
// environment.
func (m *Model) CreateJobQueue(in CreateJobQueueInput) (record.JobQueue, Change, error) {
	if m.queues[in.Name] != nil {
		return record.JobQueue{}, Change{}, conflictf(msgExists)
	}
	if in.Type != typeSageMaker {
		return record.JobQueue{}, Change{}, invalidf("jobQueueType must be SAGEMAKER_TRAINING: this server runs service jobs only")
	}
	if len(in.ComputeEnvironmentOrder) > 0 {
		return record.JobQueue{}, Change{}, invalidf("A SAGEMAKER_TRAINING job queue cannot have compute environments")
	}
	quota, err := m.policyKind(in.SchedulingPolicyArn)
	if err != nil {
		return record.JobQueue{}, Change{}, err
	}
	q := &Queue{quota: quota, shares: map[string]*Share{}}
	se, err := m.queueEnv(q, in.ServiceEnvironmentOrder, quota || isFair(m.policies[in.SchedulingPolicyArn]))
	if err != nil {
		return record.JobQueue{}, Change{}, err
	}
	q.JobQueue = record.JobQueue{
		JobQueueName: in.Name, JobQueueArn: m.cfg.Base.JobQueue(in.Name), State: orDefault(in.State, Enabled),
		SchedulingPolicyArn: in.SchedulingPolicyArn, Status: statusValid, StatusReason: queueHealthy,
		Priority: in.Priority, ComputeEnvironmentOrder: []json.RawMessage{},
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: in.ServiceEnvironmentOrder[0].Order, ServiceEnvironment: se.ServiceEnvironmentArn}},
		JobQueueType:            in.Type, Tags: nonNilTags(in.Tags),
		JobStateTimeLimitActions: nonNilActions(in.JobStateTimeLimitActions),
	}
	q.env = se.ServiceEnvironmentName
	return q.JobQueue, Change{Events: []core.Event{m.queueEvent(q)}, Puts: []Put{putQueue(q)}, queue: q}, nil
}

func nonNilTags(t map[string]string) map[string]string {
	if t == nil {
		return map[string]string{}
	}
	return t
}

func nonNilActions(a []record.JobStateTimeLimitAction) []record.JobStateTimeLimitAction {
	if a == nil {
		return []record.JobStateTimeLimitAction{}
	}
	return a
}

// UpdateJobQueue changes a queue's state, priority, scheduling policy (for
// one of the same type), service environment or time limit actions.
func (m *Model) UpdateJobQueue(in UpdateJobQueueInput) (record.JobQueue, Change, error) {
	q, err := m.Queue(in.JobQueue)
	if err != nil {
		return record.JobQueue{}, Change{}, err
	}
	next := *q
	if in.State != "" {
		next.State = in.State
	}
	if in.Priority != nil {
		next.Priority = *in.Priority
	}
	if in.SchedulingPolicyArn != "" {
		quota, err := m.policyKind(in.SchedulingPolicyArn)
		if err != nil {
			return record.JobQueue{}, Change{}, err
		}
		if q.SchedulingPolicyArn == "" || quota != q.quota {
			return record.JobQueue{}, Change{}, invalidf("A job queue's scheduling policy can be replaced only by one of the same type, and none can be added to a FIFO job queue")
		}
		next.SchedulingPolicyArn = in.SchedulingPolicyArn
	}
	if in.ServiceEnvironmentOrder != nil {
		se, err := m.queueEnv(q, in.ServiceEnvironmentOrder, q.quota || (!q.fifo && isFair(m.policies[next.SchedulingPolicyArn])))
		if err != nil {
			return record.JobQueue{}, Change{}, err
		}
		next.env = se.ServiceEnvironmentName
		next.ServiceEnvironmentOrder = []record.ServiceEnvironmentOrder{{Order: in.ServiceEnvironmentOrder[0].Order, ServiceEnvironment: se.ServiceEnvironmentArn}}
	}
	if in.JobStateTimeLimitActions != nil {
		next.JobStateTimeLimitActions = in.JobStateTimeLimitActions
	}
	if len(in.ComputeEnvironmentOrder) > 0 {
		return record.JobQueue{}, Change{}, invalidf("A SAGEMAKER_TRAINING job queue cannot have compute environments")
	}
	return next.JobQueue, Change{Events: []core.Event{m.queueEvent(&next)}, Puts: []Put{putQueue(&next)}, queue: &next}, nil
}

// DeleteJobQueue deletes a DISABLED job queue and its quota shares.
func (m *Model) DeleteJobQueue(nameOrArn string) (Change, error) {
	q, err := m.Queue(nameOrArn)
	if err != nil {
		return Change{}, err
	}
	if q.State != Disabled {
		return Change{}, conflictf("Job queue %s must be DISABLED before it is deleted", q.JobQueueName)
	}
	ch := Change{Events: []core.Event{core.DeleteQueue{Name: q.JobQueueName}}, del: deletion{kind: KindQueue, name: q.JobQueueName}}
	for _, name := range q.ShareNames() {
		ch.Deleted = append(ch.Deleted, q.shares[name].QuotaShareArn)
	}
	ch.Deleted = append(ch.Deleted, q.JobQueueArn)
	return ch, nil
}

// DescribeJobQueues returns a page of the queues named (those that
// exist), or of all by name.
func (m *Model) DescribeJobQueues(namesOrArns []string, p Page) ([]record.JobQueue, string) {
	var all []record.JobQueue
	if len(namesOrArns) > 0 {
		for _, n := range namesOrArns {
			if q, err := m.Queue(n); err == nil {
				all = append(all, q.JobQueue)
			}
		}
	} else {
		for _, q := range m.Queues() {
			all = append(all, q.JobQueue)
		}
	}
	return paginate(all, p, func(x record.JobQueue) string { return x.JobQueueName })
}
