package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

const (
	stateEnabled  = "ENABLED"
	stateDisabled = "DISABLED"
	statusValid   = "VALID"
	typeSageMaker = "SAGEMAKER_TRAINING"
	msgExists     = "Object already exists"
)

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// --- scheduling policies

func (e *Engine) CreateSchedulingPolicy(ctx context.Context, in CreateSchedulingPolicyInput) (record.SchedulingPolicy, error) {
	var out record.SchedulingPolicy
	err := e.do(ctx, func(c *cycle) error {
		arn := e.base().SchedulingPolicy(in.Name)
		if e.policies[arn] != nil {
			return conflictf(msgExists)
		}
		p := &policyRec{record.SchedulingPolicy{Arn: arn, Name: in.Name, QuotaSharePolicy: in.QuotaSharePolicy, FairsharePolicy: in.FairsharePolicy, Tags: in.Tags}}
		e.policies[arn] = p
		e.touchResource(c, kindPolicy, arn, &p.SchedulingPolicy)
		out = p.SchedulingPolicy
		return nil
	})
	return out, err
}

func (e *Engine) UpdateSchedulingPolicy(ctx context.Context, in UpdateSchedulingPolicyInput) error {
	return e.do(ctx, func(c *cycle) error {
		p := e.policies[in.Arn]
		if p == nil {
			return notFoundf("Scheduling policy %s does not exist", in.Arn)
		}
		if in.QuotaSharePolicy != nil && p.QuotaSharePolicy == nil || in.FairsharePolicy != nil && p.FairsharePolicy == nil {
			return invalidf("A scheduling policy's type cannot be changed")
		}
		if in.QuotaSharePolicy != nil {
			p.QuotaSharePolicy = in.QuotaSharePolicy
		}
		if in.FairsharePolicy != nil {
			old := p.FairsharePolicy
			p.FairsharePolicy = in.FairsharePolicy
			if err := e.refreshFairQueues(p.Arn); err != nil {
				p.FairsharePolicy = old
				_ = e.refreshFairQueues(p.Arn) // as it was: accepted before
				return err
			}
		}
		e.touchResource(c, kindPolicy, p.Arn, &p.SchedulingPolicy)
		return nil
	})
}

func (e *Engine) DeleteSchedulingPolicy(ctx context.Context, arn string) error {
	return e.do(ctx, func(c *cycle) error {
		p := e.policies[arn]
		if p == nil {
			return notFoundf("Scheduling policy %s does not exist", arn)
		}
		for _, q := range e.sortedQueues() {
			if q.SchedulingPolicyArn == arn {
				return conflictf("Scheduling policy %s is used by job queue %s", arn, q.JobQueueName)
			}
		}
		delete(e.policies, arn)
		e.deleteResource(c, arn)
		return nil
	})
}

func (e *Engine) DescribeSchedulingPolicies(ctx context.Context, arns []string) ([]record.SchedulingPolicy, error) {
	e.rlock()
	defer e.mu.RUnlock()
	var out []record.SchedulingPolicy
	for _, a := range arns {
		if p := e.policies[a]; p != nil {
			out = append(out, p.SchedulingPolicy)
		}
	}
	return out, nil
}

func (e *Engine) ListSchedulingPolicies(ctx context.Context, p Page) ([]record.SchedulingPolicy, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	var all []record.SchedulingPolicy
	for _, pol := range e.policies {
		all = append(all, pol.SchedulingPolicy)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].Arn < all[b].Arn })
	return paginate(all, p, func(x record.SchedulingPolicy) string { return x.Arn })
}

// --- service environments

func (e *Engine) checkCapacityLimits(what string, ls []record.CapacityLimit) error {
	if len(ls) == 0 {
		return invalidf("%s requires at least one capacity limit", what)
	}
	if len(ls) > e.opts.MaxCapacityLimits {
		return invalidf("%s supports at most %d capacity limits", what, e.opts.MaxCapacityLimits)
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if !trainingjob.ValidInstanceType(l.CapacityUnit) {
			return invalidf("capacityUnit %q is not a SageMaker Training instance type (such as ml.g5.xlarge)", l.CapacityUnit)
		}
		if seen[l.CapacityUnit] {
			return invalidf("capacityUnit %s is listed more than once", l.CapacityUnit)
		}
		seen[l.CapacityUnit] = true
		if l.MaxCapacity < 0 {
			return invalidf("maxCapacity must be at least 0")
		}
	}
	return nil
}

func unitsOf(ls []record.CapacityLimit) []core.UnitCount {
	out := make([]core.UnitCount, len(ls))
	for i, l := range ls {
		out[i] = core.UnitCount{Unit: l.CapacityUnit, Count: l.MaxCapacity}
	}
	return out
}

func (e *Engine) CreateServiceEnvironment(ctx context.Context, in CreateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	var out record.ServiceEnvironment
	err := e.do(ctx, func(c *cycle) error {
		if e.envs[in.Name] != nil {
			return conflictf(msgExists)
		}
		if in.Type != typeSageMaker {
			return invalidf("serviceEnvironmentType must be SAGEMAKER_TRAINING")
		}
		if err := e.checkCapacityLimits("A service environment", in.CapacityLimits); err != nil {
			return err
		}
		se := &envRec{record.ServiceEnvironment{
			ServiceEnvironmentName: in.Name, ServiceEnvironmentArn: e.base().ServiceEnvironment(in.Name),
			ServiceEnvironmentType: in.Type, State: orDefault(in.State, stateEnabled), Status: statusValid,
			CapacityLimits: in.CapacityLimits, Tags: in.Tags,
		}}
		if err := coreErr(e.core.Apply(e.envEvent(se))); err != nil {
			return err
		}
		e.envs[in.Name] = se
		e.touchResource(c, kindEnv, se.ServiceEnvironmentArn, &se.ServiceEnvironment)
		out = se.ServiceEnvironment
		return nil
	})
	return out, err
}

func (e *Engine) envEvent(se *envRec) core.PutEnv {
	return core.PutEnv{Name: se.ServiceEnvironmentName, Limits: unitsOf(se.CapacityLimits), Disabled: se.State == stateDisabled}
}

func (e *Engine) findEnv(nameOrArn string) (*envRec, error) {
	se := e.envs[e.ownName(nameOrArn, arn.ServiceEnvironment)]
	if se == nil {
		return nil, notFoundf("Service environment %s does not exist", nameOrArn)
	}
	return se, nil
}

func (e *Engine) UpdateServiceEnvironment(ctx context.Context, in UpdateServiceEnvironmentInput) (record.ServiceEnvironment, error) {
	var out record.ServiceEnvironment
	err := e.do(ctx, func(c *cycle) error {
		se, err := e.findEnv(in.ServiceEnvironment)
		if err != nil {
			return err
		}
		next := *se
		if in.CapacityLimits != nil {
			if err := e.checkCapacityLimits("A service environment", in.CapacityLimits); err != nil {
				return err
			}
			next.CapacityLimits = in.CapacityLimits
		}
		if in.State != "" {
			next.State = in.State
		}
		if err := coreErr(e.core.Apply(e.envEvent(&next))); err != nil {
			return err
		}
		*se = next
		e.touchResource(c, kindEnv, se.ServiceEnvironmentArn, &se.ServiceEnvironment)
		out = se.ServiceEnvironment
		return nil
	})
	return out, err
}

func (e *Engine) DeleteServiceEnvironment(ctx context.Context, nameOrArn string) error {
	return e.do(ctx, func(c *cycle) error {
		se, err := e.findEnv(nameOrArn)
		if err != nil {
			return err
		}
		if se.State != stateDisabled {
			return conflictf("Service environment %s must be DISABLED before it is deleted", se.ServiceEnvironmentName)
		}
		for _, q := range e.sortedQueues() {
			if q.env == se.ServiceEnvironmentName {
				return conflictf("Service environment %s is still associated with job queue %s", se.ServiceEnvironmentName, q.JobQueueName)
			}
		}
		if err := coreErr(e.core.Apply(core.DeleteEnv{Name: se.ServiceEnvironmentName})); err != nil {
			return err
		}
		delete(e.envs, se.ServiceEnvironmentName)
		e.deleteResource(c, se.ServiceEnvironmentArn)
		return nil
	})
}

func (e *Engine) DescribeServiceEnvironments(ctx context.Context, namesOrArns []string, p Page) ([]record.ServiceEnvironment, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	var all []record.ServiceEnvironment
	if len(namesOrArns) > 0 {
		for _, n := range namesOrArns {
			if se, err := e.findEnv(n); err == nil {
				all = append(all, se.ServiceEnvironment)
			}
		}
	} else {
		for _, se := range e.envs {
			all = append(all, se.ServiceEnvironment)
		}
		sort.Slice(all, func(a, b int) bool { return all[a].ServiceEnvironmentName < all[b].ServiceEnvironmentName })
	}
	return paginate(all, p, func(x record.ServiceEnvironment) string { return x.ServiceEnvironmentName })
}

// --- job queues

func (e *Engine) sortedQueues() []*queueRec {
	qs := make([]*queueRec, 0, len(e.queues))
	for _, q := range e.queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *queueRec) int { return strings.Compare(a.JobQueueName, b.JobQueueName) })
	return qs
}

func (e *Engine) findQueue(nameOrArn string) (*queueRec, error) {
	q := e.queues[e.ownName(nameOrArn, arn.JobQueue)]
	if q == nil {
		return nil, notFoundf("Job queue %s does not exist", nameOrArn)
	}
	return q, nil
}

// queueEnv resolves a queue's service environment order: exactly one
// SAGEMAKER_TRAINING environment, which a quota-share or fair-share queue
// (exclusive) must not share.
func (e *Engine) queueEnv(q *queueRec, order []record.ServiceEnvironmentOrder, exclusive bool) (*envRec, error) {
	if len(order) != 1 {
		return nil, invalidf("A SAGEMAKER_TRAINING job queue requires exactly one service environment in serviceEnvironmentOrder")
	}
	se, err := e.findEnv(order[0].ServiceEnvironment)
	if err != nil {
		return nil, err
	}
	for _, o := range e.sortedQueues() {
		if o != q && o.env == se.ServiceEnvironmentName && (exclusive || o.quota || e.fairQueue(o)) {
			if !o.quota && !q.quota {
				return nil, conflictf("Service environment %s is already connected to job queue %s; a service environment of a fair-share job queue can be connected to only one job queue", se.ServiceEnvironmentName, o.JobQueueName)
			}
			return nil, conflictf("Service environment %s is already connected to job queue %s; a quota management service environment can be connected to only one job queue", se.ServiceEnvironmentName, o.JobQueueName)
		}
	}
	return se, nil
}

func (e *Engine) policyKind(arn string) (quota bool, err error) {
	if arn == "" {
		return false, nil
	}
	p := e.policies[arn]
	if p == nil {
		return false, notFoundf("Scheduling policy %s does not exist", arn)
	}
	return p.QuotaSharePolicy != nil, nil
}

// queueHealthy is a valid job queue's statusReason, as AWS words it.
const queueHealthy = "JobQueue Healthy"

func (e *Engine) CreateJobQueue(ctx context.Context, in CreateJobQueueInput) (record.JobQueue, error) {
	var out record.JobQueue
	err := e.do(ctx, func(c *cycle) error {
		if e.queues[in.Name] != nil {
			return conflictf(msgExists)
		}
		if in.Type != typeSageMaker {
			return invalidf("jobQueueType must be SAGEMAKER_TRAINING: this server runs service jobs only")
		}
		if len(in.ComputeEnvironmentOrder) > 0 {
			return invalidf("A SAGEMAKER_TRAINING job queue cannot have compute environments")
		}
		quota, err := e.policyKind(in.SchedulingPolicyArn)
		if err != nil {
			return err
		}
		q := &queueRec{quota: quota, shares: map[string]*shareRec{}}
		se, err := e.queueEnv(q, in.ServiceEnvironmentOrder, quota || e.isFair(in.SchedulingPolicyArn))
		if err != nil {
			return err
		}
		q.JobQueue = record.JobQueue{
			JobQueueName: in.Name, JobQueueArn: e.base().JobQueue(in.Name), State: orDefault(in.State, stateEnabled),
			SchedulingPolicyArn: in.SchedulingPolicyArn, Status: statusValid, StatusReason: queueHealthy,
			Priority: in.Priority, ComputeEnvironmentOrder: []json.RawMessage{},
			ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: in.ServiceEnvironmentOrder[0].Order, ServiceEnvironment: se.ServiceEnvironmentArn}},
			JobQueueType:            in.Type, Tags: nonNilTags(in.Tags),
			JobStateTimeLimitActions: nonNilActions(in.JobStateTimeLimitActions),
		}
		q.env = se.ServiceEnvironmentName
		if err := coreErr(e.core.Apply(e.queueEvent(q))); err != nil {
			return err
		}
		e.queues[in.Name] = q
		e.touchResource(c, kindQueue, q.JobQueueArn, &q.JobQueue)
		out = q.JobQueue
		return nil
	})
	return out, err
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

func (e *Engine) queueEvent(q *queueRec) core.PutQueue {
	return core.PutQueue{Name: q.JobQueueName, Env: q.env, QuotaShares: q.quota, Priority: q.Priority, Disabled: q.State == stateDisabled, Fair: e.fairOf(q)}
}

func (e *Engine) UpdateJobQueue(ctx context.Context, in UpdateJobQueueInput) (record.JobQueue, error) {
	var out record.JobQueue
	err := e.do(ctx, func(c *cycle) error {
		q, err := e.findQueue(in.JobQueue)
		if err != nil {
			return err
		}
		next := *q
		if in.State != "" {
			next.State = in.State
		}
		if in.Priority != nil {
			next.Priority = *in.Priority
		}
		if in.SchedulingPolicyArn != "" {
			quota, err := e.policyKind(in.SchedulingPolicyArn)
			if err != nil {
				return err
			}
			if q.SchedulingPolicyArn == "" || quota != q.quota {
				return invalidf("A job queue's scheduling policy can be replaced only by one of the same type, and none can be added to a FIFO job queue")
			}
			next.SchedulingPolicyArn = in.SchedulingPolicyArn
		}
		if in.ServiceEnvironmentOrder != nil {
			se, err := e.queueEnv(q, in.ServiceEnvironmentOrder, q.quota || (!q.fifo && e.isFair(next.SchedulingPolicyArn)))
			if err != nil {
				return err
			}
			next.env = se.ServiceEnvironmentName
			next.ServiceEnvironmentOrder = []record.ServiceEnvironmentOrder{{Order: in.ServiceEnvironmentOrder[0].Order, ServiceEnvironment: se.ServiceEnvironmentArn}}
		}
		if in.JobStateTimeLimitActions != nil {
			next.JobStateTimeLimitActions = in.JobStateTimeLimitActions
		}
		if len(in.ComputeEnvironmentOrder) > 0 {
			return invalidf("A SAGEMAKER_TRAINING job queue cannot have compute environments")
		}
		if err := coreErr(e.core.Apply(e.queueEvent(&next))); err != nil {
			return err
		}
		*q = next
		e.touchResource(c, kindQueue, q.JobQueueArn, &q.JobQueue)
		out = q.JobQueue
		return nil
	})
	return out, err
}

func (e *Engine) DeleteJobQueue(ctx context.Context, nameOrArn string) error {
	return e.do(ctx, func(c *cycle) error {
		q, err := e.findQueue(nameOrArn)
		if err != nil {
			return err
		}
		if q.State != stateDisabled {
			return conflictf("Job queue %s must be DISABLED before it is deleted", q.JobQueueName)
		}
		if err := coreErr(e.core.Apply(core.DeleteQueue{Name: q.JobQueueName})); err != nil {
			return err
		}
		for _, s := range q.shares {
			e.deleteResource(c, s.QuotaShareArn)
		}
		delete(e.queues, q.JobQueueName)
		e.deleteResource(c, q.JobQueueArn)
		return nil
	})
}

func (e *Engine) DescribeJobQueues(ctx context.Context, namesOrArns []string, p Page) ([]record.JobQueue, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	var all []record.JobQueue
	if len(namesOrArns) > 0 {
		for _, n := range namesOrArns {
			if q, err := e.findQueue(n); err == nil {
				all = append(all, q.JobQueue)
			}
		}
	} else {
		for _, q := range e.sortedQueues() {
			all = append(all, q.JobQueue)
		}
	}
	return paginate(all, p, func(x record.JobQueue) string { return x.JobQueueName })
}

// --- quota shares

// findShare resolves a quota share ARN: .../job-queue/<queue>/quota-share/<name>.
func (e *Engine) findShare(shareArn string) (*queueRec, *shareRec, error) {
	rest := e.ownName(shareArn, arn.JobQueue)
	qn, sn, ok := strings.Cut(rest, "/quota-share/")
	if ok {
		if q := e.queues[qn]; q != nil {
			if s := q.shares[sn]; s != nil {
				return q, s, nil
			}
		}
	}
	return nil, nil, notFoundf("Quota share %s does not exist", shareArn)
}

func (e *Engine) checkShare(q *queueRec, s *record.QuotaShare) error {
	if err := e.checkCapacityLimits("A quota share", s.CapacityLimits); err != nil {
		return err
	}
	se := e.envs[q.env]
	for _, l := range s.CapacityLimits {
		if l.MaxCapacity < 1 {
			return invalidf("maxCapacity must be at least 1")
		}
		if !slices.ContainsFunc(se.CapacityLimits, func(x record.CapacityLimit) bool { return x.CapacityUnit == l.CapacityUnit }) {
			return invalidf("capacityUnit %s is not among the capacity limits of service environment %s", l.CapacityUnit, se.ServiceEnvironmentName)
		}
	}
	rs := s.ResourceSharingConfiguration
	if rs.BorrowLimit != nil && rs.Strategy != "LEND_AND_BORROW" {
		return invalidf("borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW")
	}
	if rs.BorrowLimit != nil && *rs.BorrowLimit < -1 {
		return invalidf("borrowLimit must be -1 (unlimited) or more")
	}
	return nil
}

func (e *Engine) shareEvent(q *queueRec, s *record.QuotaShare) (core.PutShare, error) {
	st, err := core.ParseStrategy(s.ResourceSharingConfiguration.Strategy)
	if err != nil {
		return core.PutShare{}, invalidf("%s", err.Error())
	}
	borrow := core.UnlimitedBorrow
	if b := s.ResourceSharingConfiguration.BorrowLimit; b != nil {
		borrow = *b
	}
	return core.PutShare{
		Queue: q.JobQueueName, Name: s.QuotaShareName, Limits: unitsOf(s.CapacityLimits), Strategy: st, BorrowLimit: borrow,
		InSharePreemption: s.PreemptionConfiguration.InSharePreemption == stateEnabled, Disabled: s.State == stateDisabled,
		MinRuntime: secs(s.MinimumRuntimeSeconds),
	}, nil
}

func (e *Engine) CreateQuotaShare(ctx context.Context, in CreateQuotaShareInput) (record.QuotaShare, error) {
	var out record.QuotaShare
	err := e.do(ctx, func(c *cycle) error {
		q, err := e.findQueue(in.JobQueue)
		if err != nil {
			return err
		}
		if !q.quota {
			return invalidf("Job queue %s is not quota management enabled: its scheduling policy has no quotaSharePolicy", q.JobQueueName)
		}
		if q.shares[in.Name] != nil {
			return conflictf("Quota share %s already exists", in.Name)
		}
		if len(q.shares) >= e.opts.MaxSharesPerQueue {
			return invalidf("Job queue %s already has the maximum of %d quota shares", q.JobQueueName, e.opts.MaxSharesPerQueue)
		}
		s := &shareRec{queue: q.JobQueueName, QuotaShare: record.QuotaShare{
			QuotaShareName: in.Name, QuotaShareArn: q.JobQueueArn + "/quota-share/" + in.Name, JobQueueArn: q.JobQueueArn,
			CapacityLimits: in.CapacityLimits, ResourceSharingConfiguration: in.ResourceSharingConfiguration,
			PreemptionConfiguration: in.PreemptionConfiguration, State: orDefault(in.State, stateEnabled), Status: statusValid, Tags: in.Tags,
		}}
		if err := e.applyShare(q, s); err != nil {
			return err
		}
		q.shares[in.Name] = s
		e.touchResource(c, kindShare, s.QuotaShareArn, &s.QuotaShare)
		out = s.QuotaShare
		return nil
	})
	return out, err
}

func (e *Engine) applyShare(q *queueRec, s *shareRec) error {
	if err := e.checkShare(q, &s.QuotaShare); err != nil {
		return err
	}
	ev, err := e.shareEvent(q, &s.QuotaShare)
	if err != nil {
		return err
	}
	return coreErr(e.core.Apply(ev))
}

func (e *Engine) UpdateQuotaShare(ctx context.Context, in UpdateQuotaShareInput) (record.QuotaShare, error) {
	var out record.QuotaShare
	err := e.do(ctx, func(c *cycle) error {
		q, s, err := e.findShare(in.QuotaShareArn)
		if err != nil {
			return err
		}
		next := *s
		if in.CapacityLimits != nil {
			next.CapacityLimits = in.CapacityLimits
		}
		if in.ResourceSharingConfiguration != nil {
			next.ResourceSharingConfiguration = *in.ResourceSharingConfiguration
		}
		if in.PreemptionConfiguration != nil {
			next.PreemptionConfiguration = *in.PreemptionConfiguration
		}
		if in.State != "" {
			next.State = in.State
		}
		if err := e.applyShare(q, &next); err != nil {
			return err
		}
		*s = next
		e.touchResource(c, kindShare, s.QuotaShareArn, &s.QuotaShare)
		out = s.QuotaShare
		return nil
	})
	return out, err
}

// MaxMinimumRuntimeSeconds is the longest minimum runtime before preemption
// a quota share may have: a year.
const MaxMinimumRuntimeSeconds = 365 * 24 * 3600

// SetQuotaShareMinimumRuntime sets sharq's minimum runtime before
// preemption of a quota share, in seconds (0: none): a dispatched job of
// the share younger than that is no victim of in-share or cross-share
// preemption. AWS's API has no such field, so it is set here, apart from
// UpdateQuotaShare, which keeps it.
func (e *Engine) SetQuotaShareMinimumRuntime(ctx context.Context, shareArn string, seconds int) (record.QuotaShare, error) {
	var out record.QuotaShare
	err := e.do(ctx, func(c *cycle) error {
		if seconds < 0 || seconds > MaxMinimumRuntimeSeconds {
			return invalidf("minimum runtime %d s is outside 0-%d", seconds, MaxMinimumRuntimeSeconds)
		}
		q, s, err := e.findShare(shareArn)
		if err != nil {
			return err
		}
		next := *s
		next.MinimumRuntimeSeconds = seconds
		if err := e.applyShare(q, &next); err != nil {
			return err
		}
		*s = next
		e.touchResource(c, kindShare, s.QuotaShareArn, &s.QuotaShare)
		out = s.QuotaShare
		return nil
	})
	return out, err
}

func (e *Engine) DeleteQuotaShare(ctx context.Context, arn string) error {
	return e.do(ctx, func(c *cycle) error {
		q, s, err := e.findShare(arn)
		if err != nil {
			return err
		}
		if s.State != stateDisabled {
			return conflictf("Quota share %s must be DISABLED before it is deleted", s.QuotaShareName)
		}
		if err := coreErr(e.core.Apply(core.DeleteShare{Queue: q.JobQueueName, Name: s.QuotaShareName})); err != nil {
			return err
		}
		delete(q.shares, s.QuotaShareName)
		e.deleteResource(c, s.QuotaShareArn)
		return nil
	})
}

func (e *Engine) DescribeQuotaShare(ctx context.Context, arn string) (record.QuotaShare, error) {
	e.rlock()
	defer e.mu.RUnlock()
	_, s, err := e.findShare(arn)
	if err != nil {
		return record.QuotaShare{}, err
	}
	return s.QuotaShare, nil
}

func (e *Engine) ListQuotaShares(ctx context.Context, jobQueue string, p Page) ([]record.QuotaShare, string, error) {
	e.rlock()
	defer e.mu.RUnlock()
	q, err := e.findQueue(jobQueue)
	if err != nil {
		return nil, "", err
	}
	var all []record.QuotaShare
	for _, s := range q.shares {
		all = append(all, s.QuotaShare)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].QuotaShareName < all[b].QuotaShareName })
	return paginate(all, p, func(x record.QuotaShare) string { return x.QuotaShareName })
}

// paginate returns the page after p.NextToken (the key of the last item of
// the previous page) of items sorted by key.
func paginate[T any](all []T, p Page, key func(T) string) ([]T, string, error) {
	start := 0
	if p.NextToken != "" {
		start = sort.Search(len(all), func(i int) bool { return key(all[i]) > p.NextToken })
	}
	n := p.MaxResults
	if n <= 0 || n > 100 {
		n = 100
	}
	end := min(start+n, len(all))
	page := all[start:end]
	if end < len(all) {
		return page, key(all[end-1]), nil
	}
	return page, "", nil
}
