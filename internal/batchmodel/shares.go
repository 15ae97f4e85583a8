package batchmodel

import (
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

func putShare(s *Share) Put {
	return Put{Kind: KindShare, ARN: s.QuotaShareArn, Record: &s.QuotaShare}
}

// checkShare checks a quota share of queue q against AWS's rules and its
// service environment's capacity limits.
func (m *Model) checkShare(q *Queue, s *record.QuotaShare) error {
	if err := m.checkCapacityLimits("A quota share", s.CapacityLimits); err != nil {
		return err
	}
	se := m.envs[q.env]
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

// shareEvent is the core's view of quota share s of queue q.
func shareEvent(q *Queue, s *record.QuotaShare) (core.PutShare, error) {
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
		InSharePreemption: s.PreemptionConfiguration.InSharePreemption == Enabled, Disabled: s.State == Disabled,
		MinRuntime: time.Duration(s.MinimumRuntimeSeconds) * time.Second,
	}, nil
}

// putShareChange checks share s of queue q and makes the change that puts
// it.
func (m *Model) putShareChange(q *Queue, s *Share) (record.QuotaShare, Change, error) {
	if err := m.checkShare(q, &s.QuotaShare); err != nil {
		return record.QuotaShare{}, Change{}, err
	}
	ev, err := shareEvent(q, &s.QuotaShare)
	if err != nil {
		return record.QuotaShare{}, Change{}, err
	}
	return s.QuotaShare, Change{Events: []core.Event{ev}, Puts: []Put{putShare(s)}, share: s}, nil
}

// CreateQuotaShare makes a quota share in a quota-share job queue.
func (m *Model) CreateQuotaShare(in CreateQuotaShareInput) (record.QuotaShare, Change, error) {
	q, err := m.Queue(in.JobQueue)
	if err != nil {
		return record.QuotaShare{}, Change{}, err
	}
	if !q.quota {
		return record.QuotaShare{}, Change{}, invalidf("Job queue %s is not quota management enabled: its scheduling policy has no quotaSharePolicy", q.JobQueueName)
	}
	if q.shares[in.Name] != nil {
		return record.QuotaShare{}, Change{}, conflictf("Quota share %s already exists", in.Name)
	}
	if len(q.shares) >= m.cfg.MaxSharesPerQueue {
		return record.QuotaShare{}, Change{}, invalidf("Job queue %s already has the maximum of %d quota shares", q.JobQueueName, m.cfg.MaxSharesPerQueue)
	}
	s := &Share{queue: q.JobQueueName, QuotaShare: record.QuotaShare{
		QuotaShareName: in.Name, QuotaShareArn: q.JobQueueArn + "/quota-share/" + in.Name, JobQueueArn: q.JobQueueArn,
		CapacityLimits: in.CapacityLimits, ResourceSharingConfiguration: in.ResourceSharingConfiguration,
		PreemptionConfiguration: in.PreemptionConfiguration, State: orDefault(in.State, Enabled), Status: statusValid, Tags: in.Tags,
	}}
	return m.putShareChange(q, s)
}

// UpdateQuotaShare changes a quota share's limits, sharing, preemption or
// state.
func (m *Model) UpdateQuotaShare(in UpdateQuotaShareInput) (record.QuotaShare, Change, error) {
	q, s, err := m.findShare(in.QuotaShareArn)
	if err != nil {
		return record.QuotaShare{}, Change{}, err
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
	return m.putShareChange(q, &next)
}

// SetQuotaShareMinimumRuntime sets sharq's minimum runtime before
// preemption of a quota share, in seconds (0: none). AWS's API has no such
// field; UpdateQuotaShare keeps it.
func (m *Model) SetQuotaShareMinimumRuntime(shareArn string, seconds int) (record.QuotaShare, Change, error) {
	if seconds < 0 || seconds > MaxMinimumRuntimeSeconds {
		return record.QuotaShare{}, Change{}, invalidf("minimum runtime %d s is outside 0-%d", seconds, MaxMinimumRuntimeSeconds)
	}
	q, s, err := m.findShare(shareArn)
	if err != nil {
		return record.QuotaShare{}, Change{}, err
	}
	next := *s
	next.MinimumRuntimeSeconds = seconds
	return m.putShareChange(q, &next)
}

// DeleteQuotaShare deletes a DISABLED quota share.
func (m *Model) DeleteQuotaShare(shareArn string) (Change, error) {
	q, s, err := m.findShare(shareArn)
	if err != nil {
		return Change{}, err
	}
	if s.State != Disabled {
		return Change{}, conflictf("Quota share %s must be DISABLED before it is deleted", s.QuotaShareName)
	}
	return Change{
		Events:  []core.Event{core.DeleteShare{Queue: q.JobQueueName, Name: s.QuotaShareName}},
		Deleted: []string{s.QuotaShareArn},
		del:     deletion{kind: KindShare, name: s.QuotaShareName, queue: q.JobQueueName},
	}, nil
}

// DescribeQuotaShare returns the quota share of that ARN.
func (m *Model) DescribeQuotaShare(shareArn string) (record.QuotaShare, error) {
	_, s, err := m.findShare(shareArn)
	if err != nil {
		return record.QuotaShare{}, err
	}
	return s.QuotaShare, nil
}

// ListQuotaShares returns a page of a job queue's quota shares, by name.
func (m *Model) ListQuotaShares(jobQueue string, p Page) ([]record.QuotaShare, string, error) {
	q, err := m.Queue(jobQueue)
	if err != nil {
		return nil, "", err
	}
	var all []record.QuotaShare
	for _, s := range q.shares {
		all = append(all, s.QuotaShare)
	}
	slices.SortFunc(all, func(a, b record.QuotaShare) int { return strings.Compare(a.QuotaShareName, b.QuotaShareName) })
	items, next := paginate(all, p, func(x record.QuotaShare) string { return x.QuotaShareName })
	return items, next, nil
}
