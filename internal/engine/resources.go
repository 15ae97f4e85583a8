package engine

import (
	"context"
	"errors"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// The AWS Batch resources are the resource model's (batchmodel): each
// method here runs one of its operations in a cycle. The model checks the
// request and says what changes; the core takes the change's events, the
// model then commits it, and the cycle stores its records.

// modelConfig is what the resource model is made with.
func (e *Engine) modelConfig() batchmodel.Config {
	return batchmodel.Config{Base: e.base(), MaxSharesPerQueue: e.opts.MaxSharesPerQueue, MaxCapacityLimits: e.opts.MaxCapacityLimits}
}

// applyChange applies a change of the model in cycle c: its events to the
// core, which may refuse one (the core is then put back and nothing
// changes), then the change to the model and its records to the cycle.
func (e *Engine) applyChange(c *cycle, ch batchmodel.Change) error {
	for _, ev := range ch.Events {
		if err := coreErr(e.core.Apply(ev)); err != nil {
			for _, u := range ch.Undo {
				_ = e.core.Apply(u) // as it was: accepted before
			}
			return err
		}
	}
	e.model.Commit(ch)
	for _, p := range ch.Puts {
		e.touchResource(c, p.Kind, p.ARN, p.Record)
	}
	for _, a := range ch.Deleted {
		e.deleteResource(c, a)
	}
	return nil
}

// modelErr turns the model's refusal into the engine's error.
func modelErr(err error) error {
	if err == nil {
		return nil
	}
	var me *batchmodel.Error
	if errors.As(err, &me) {
		return &Error{Code: me.Code, Message: me.Message}
	}
	return err
}

// put runs an operation of the model that puts a resource, in a cycle,
// and answers with the resource as put.
func put[T any](ctx context.Context, e *Engine, plan func(m *batchmodel.Model) (T, batchmodel.Change, error)) (T, error) {
	var out T
	err := e.do(ctx, changeFunc(func(c *cycle) error {
		r, ch, err := plan(e.model)
		if err != nil {
			return modelErr(err)
		}
		if err := e.applyChange(c, ch); err != nil {
			return err
		}
		out = r
		return nil
	}))
	return out, err
}

// alter runs an operation of the model that deletes or changes a
// resource without answering with it, in a cycle.
func (e *Engine) alter(ctx context.Context, plan func(m *batchmodel.Model) (batchmodel.Change, error)) error {
	return e.do(ctx, changeFunc(func(c *cycle) error {
		ch, err := plan(e.model)
		if err != nil {
			return modelErr(err)
		}
		return e.applyChange(c, ch)
	}))
}

// --- scheduling policies

func (e *Engine) CreateSchedulingPolicy(ctx context.Context, in batchmodel.CreateSchedulingPolicyInput) (record.SchedulingPolicy, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.SchedulingPolicy, batchmodel.Change, error) {
		return m.CreateSchedulingPolicy(in)
	})
}

func (e *Engine) UpdateSchedulingPolicy(ctx context.Context, in batchmodel.UpdateSchedulingPolicyInput) error {
	return e.alter(ctx, func(m *batchmodel.Model) (batchmodel.Change, error) { return m.UpdateSchedulingPolicy(in) })
}

func (e *Engine) DeleteSchedulingPolicy(ctx context.Context, arn string) error {
	return e.alter(ctx, func(m *batchmodel.Model) (batchmodel.Change, error) { return m.DeleteSchedulingPolicy(arn) })
}

func (e *Engine) DescribeSchedulingPolicies(ctx context.Context, arns []string) ([]record.SchedulingPolicy, error) {
	e.rlock()
	defer e.mu.RUnlock()
	return e.model.DescribeSchedulingPolicies(arns), nil
}

func (e *Engine) ListSchedulingPolicies(ctx context.Context, p batchmodel.Page) ([]record.SchedulingPolicy, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	out, next := e.model.ListSchedulingPolicies(p)
	return out, next, nil
}

// --- service environments

func (e *Engine) CreateServiceEnvironment(ctx context.Context, in batchmodel.CreateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.ServiceEnvironment, batchmodel.Change, error) {
		return m.CreateServiceEnvironment(in)
	})
}

func (e *Engine) UpdateServiceEnvironment(ctx context.Context, in batchmodel.UpdateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.ServiceEnvironment, batchmodel.Change, error) {
		return m.UpdateServiceEnvironment(in)
	})
}

func (e *Engine) DeleteServiceEnvironment(ctx context.Context, nameOrArn string) error {
	return e.alter(ctx, func(m *batchmodel.Model) (batchmodel.Change, error) { return m.DeleteServiceEnvironment(nameOrArn) })
}

func (e *Engine) DescribeServiceEnvironments(ctx context.Context, namesOrArns []string, p batchmodel.Page) ([]record.ServiceEnvironment, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	out, next := e.model.DescribeServiceEnvironments(namesOrArns, p)
	return out, next, nil
}

// --- job queues

func (e *Engine) CreateJobQueue(ctx context.Context, in batchmodel.CreateJobQueueInput) (record.JobQueue, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.JobQueue, batchmodel.Change, error) { return m.CreateJobQueue(in) })
}

func (e *Engine) UpdateJobQueue(ctx context.Context, in batchmodel.UpdateJobQueueInput) (record.JobQueue, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.JobQueue, batchmodel.Change, error) { return m.UpdateJobQueue(in) })
}

func (e *Engine) DeleteJobQueue(ctx context.Context, nameOrArn string) error {
	return e.alter(ctx, func(m *batchmodel.Model) (batchmodel.Change, error) { return m.DeleteJobQueue(nameOrArn) })
}

func (e *Engine) DescribeJobQueues(ctx context.Context, namesOrArns []string, p batchmodel.Page) ([]record.JobQueue, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	out, next := e.model.DescribeJobQueues(namesOrArns, p)
	return out, next, nil
}

// findQueue finds a job queue by name or ARN, with mu held.
func (e *Engine) findQueue(nameOrArn string) (*batchmodel.Queue, error) {
	q, err := e.model.Queue(nameOrArn)
	return q, modelErr(err)
}

// --- quota shares

func (e *Engine) CreateQuotaShare(ctx context.Context, in batchmodel.CreateQuotaShareInput) (record.QuotaShare, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.QuotaShare, batchmodel.Change, error) { return m.CreateQuotaShare(in) })
}

func (e *Engine) UpdateQuotaShare(ctx context.Context, in batchmodel.UpdateQuotaShareInput) (record.QuotaShare, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.QuotaShare, batchmodel.Change, error) { return m.UpdateQuotaShare(in) })
}

// SetQuotaShareMinimumRuntime sets sharq's minimum runtime before
// preemption of a quota share, in seconds (0: none): a dispatched job of
// the share younger than that is no victim of in-share or cross-share
// preemption. AWS's API has no such field, so it is set here, apart from
// UpdateQuotaShare, which keeps it.
func (e *Engine) SetQuotaShareMinimumRuntime(ctx context.Context, shareArn string, seconds int) (record.QuotaShare, error) {
	return put(ctx, e, func(m *batchmodel.Model) (record.QuotaShare, batchmodel.Change, error) {
		return m.SetQuotaShareMinimumRuntime(shareArn, seconds)
	})
}

func (e *Engine) DeleteQuotaShare(ctx context.Context, arn string) error {
	return e.alter(ctx, func(m *batchmodel.Model) (batchmodel.Change, error) { return m.DeleteQuotaShare(arn) })
}

func (e *Engine) DescribeQuotaShare(ctx context.Context, arn string) (record.QuotaShare, error) {
	e.rlock()
	defer e.mu.RUnlock()
	s, err := e.model.DescribeQuotaShare(arn)
	return s, modelErr(err)
}

func (e *Engine) ListQuotaShares(ctx context.Context, jobQueue string, p batchmodel.Page) ([]record.QuotaShare, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	out, next, err := e.model.ListQuotaShares(jobQueue, p)
	return out, next, modelErr(err)
}
