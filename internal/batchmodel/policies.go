package batchmodel

import (
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

func putPolicy(p *Policy) Put {
	return Put{Kind: KindPolicy, ARN: p.Arn, Record: &p.SchedulingPolicy}
}

// CreateSchedulingPolicy makes a scheduling policy.
func (m *Model) CreateSchedulingPolicy(in CreateSchedulingPolicyInput) (record.SchedulingPolicy, Change, error) {
	a := m.cfg.Base.SchedulingPolicy(in.Name)
	if m.policies[a] != nil {
		return record.SchedulingPolicy{}, Change{}, conflictf(msgExists)
	}
	p := &Policy{record.SchedulingPolicy{Arn: a, Name: in.Name, QuotaSharePolicy: in.QuotaSharePolicy, FairsharePolicy: in.FairsharePolicy, Tags: in.Tags}}
	return p.SchedulingPolicy, Change{Puts: []Put{putPolicy(p)}, policy: p}, nil
}

// UpdateSchedulingPolicy changes a policy's quotaSharePolicy or
// fairsharePolicy, not its type. The queues that use a changed fair-share
// policy are put to the core again.
func (m *Model) UpdateSchedulingPolicy(in UpdateSchedulingPolicyInput) (Change, error) {
	p := m.policies[in.Arn]
	if p == nil {
		return Change{}, notFoundf("Scheduling policy %s does not exist", in.Arn)
	}
	if in.QuotaSharePolicy != nil && p.QuotaSharePolicy == nil || in.FairsharePolicy != nil && p.FairsharePolicy == nil {
		return Change{}, invalidf("A scheduling policy's type cannot be changed")
	}
	next := *p
	if in.QuotaSharePolicy != nil {
		next.QuotaSharePolicy = in.QuotaSharePolicy
	}
	ch := Change{policy: &next}
	if in.FairsharePolicy != nil {
		next.FairsharePolicy = in.FairsharePolicy
		for _, q := range m.Queues() {
			if q.SchedulingPolicyArn == p.Arn {
				ch.Events = append(ch.Events, queueEvent(q, &next))
				ch.Undo = append(ch.Undo, queueEvent(q, p))
			}
		}
	}
	ch.Puts = []Put{putPolicy(&next)}
	return ch, nil
}

// DeleteSchedulingPolicy deletes a policy no job queue uses.
func (m *Model) DeleteSchedulingPolicy(policyArn string) (Change, error) {
	p := m.policies[policyArn]
	if p == nil {
		return Change{}, notFoundf("Scheduling policy %s does not exist", policyArn)
	}
	for _, q := range m.Queues() {
		if q.SchedulingPolicyArn == policyArn {
			return Change{}, conflictf("Scheduling policy %s is used by job queue %s", policyArn, q.JobQueueName)
		}
	}
	return Change{Deleted: []string{policyArn}, del: deletion{kind: KindPolicy, name: policyArn}}, nil
}

// DescribeSchedulingPolicies returns the policies of those ARNs that exist.
func (m *Model) DescribeSchedulingPolicies(arns []string) []record.SchedulingPolicy {
	var out []record.SchedulingPolicy
	for _, a := range arns {
		if p := m.policies[a]; p != nil {
			out = append(out, p.SchedulingPolicy)
		}
	}
	return out
}

// ListSchedulingPolicies returns a page of the policies, by ARN.
func (m *Model) ListSchedulingPolicies(p Page) ([]record.SchedulingPolicy, string) {
	var all []record.SchedulingPolicy
	for _, pol := range m.policies {
		all = append(all, pol.SchedulingPolicy)
	}
	slices.SortFunc(all, func(a, b record.SchedulingPolicy) int { return strings.Compare(a.Arn, b.Arn) })
	return paginate(all, p, func(x record.SchedulingPolicy) string { return x.Arn })
}

// policyKind tells whether the policy of that ARN ("": none) is a quota
// share policy.
func (m *Model) policyKind(policyArn string) (quota bool, err error) {
	if policyArn == "" {
		return false, nil
	}
	p := m.policies[policyArn]
	if p == nil {
		return false, notFoundf("Scheduling policy %s does not exist", policyArn)
	}
	return p.QuotaSharePolicy != nil, nil
}

// queueEvent is the core's view of job queue q under policy p (nil: none).
func queueEvent(q *Queue, p *Policy) core.PutQueue {
	return core.PutQueue{Name: q.JobQueueName, Env: q.env, QuotaShares: q.quota, Priority: q.Priority, Disabled: q.State == Disabled, Fair: fairOf(q, p)}
}

func (m *Model) queueEvent(q *Queue) core.PutQueue {
	return queueEvent(q, m.policies[q.SchedulingPolicyArn])
}
