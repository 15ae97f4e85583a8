package batchapi

import (
	"context"
	"encoding/json"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// fairsharePolicy is decoded, checked and re-encoded rather than passed
// through, so the engine stores only the members AWS defines.
type fairsharePolicy struct {
	ShareDecaySeconds  *int              `json:"shareDecaySeconds,omitempty"`
	ComputeReservation *int              `json:"computeReservation,omitempty"`
	ShareDistribution  []shareAttributes `json:"shareDistribution,omitempty"`
}

type shareAttributes struct {
	ShareIdentifier string   `json:"shareIdentifier"`
	WeightFactor    *float64 `json:"weightFactor,omitempty"`
}

type quotaSharePolicy struct {
	IdleResourceAssignmentStrategy string `json:"idleResourceAssignmentStrategy"`
}

type createSchedulingPolicyRequest struct {
	Name             string            `json:"name"`
	QuotaSharePolicy *quotaSharePolicy `json:"quotaSharePolicy"`
	FairsharePolicy  *fairsharePolicy  `json:"fairsharePolicy"`
	Tags             map[string]string `json:"tags"`
}

type updateSchedulingPolicyRequest struct {
	Arn              string            `json:"arn"`
	QuotaSharePolicy *quotaSharePolicy `json:"quotaSharePolicy"`
	FairsharePolicy  *fairsharePolicy  `json:"fairsharePolicy"`
}

type schedulingPolicyArnRequest struct {
	Arn string `json:"arn"`
}

type describeSchedulingPoliciesRequest struct {
	Arns []string `json:"arns"`
}

type listSchedulingPoliciesRequest struct {
	pageRequest
}

func (s *Handler) createSchedulingPolicy(ctx context.Context, in *createSchedulingPolicyRequest) (any, error) {
	var c check
	c.name("name", in.Name)
	qs, fs := c.policies(in.QuotaSharePolicy, in.FairsharePolicy)
	c.tags("tags", in.Tags)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:CreateSchedulingPolicy", s.base.SchedulingPolicy(in.Name)); err != nil {
		return nil, err
	}
	p, err := s.eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{
		Name: in.Name, QuotaSharePolicy: qs, FairsharePolicy: fs, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return struct {
		Arn  string `json:"arn"`
		Name string `json:"name"`
	}{p.Arn, p.Name}, nil
}

func (s *Handler) updateSchedulingPolicy(ctx context.Context, in *updateSchedulingPolicyRequest) (any, error) {
	var c check
	c.arnOf("arn", in.Arn, arn.SchedulingPolicy)
	qs, fs := c.policies(in.QuotaSharePolicy, in.FairsharePolicy)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:UpdateSchedulingPolicy", in.Arn); err != nil {
		return nil, err
	}
	err := s.eng.UpdateSchedulingPolicy(ctx, batchmodel.UpdateSchedulingPolicyInput{
		Arn: in.Arn, QuotaSharePolicy: qs, FairsharePolicy: fs,
	})
	return noBody{}, err
}

func (s *Handler) deleteSchedulingPolicy(ctx context.Context, in *schedulingPolicyArnRequest) (any, error) {
	var c check
	if c.arnOf("arn", in.Arn, arn.SchedulingPolicy); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DeleteSchedulingPolicy", in.Arn); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.DeleteSchedulingPolicy(ctx, in.Arn)
}

func (s *Handler) describeSchedulingPolicies(ctx context.Context, in *describeSchedulingPoliciesRequest) (any, error) {
	var c check
	if in.Arns == nil {
		c.failf("arns is required")
	}
	c.count("arns", len(in.Arns), 0, maxListItems)
	for i, a := range in.Arns {
		c.arnOf(at("arns", i), a, arn.SchedulingPolicy)
	}
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DescribeSchedulingPolicies", access.AnyResource); err != nil {
		return nil, err
	}
	ps, err := s.eng.DescribeSchedulingPolicies(ctx, in.Arns)
	if err != nil {
		return nil, err
	}
	return struct {
		SchedulingPolicies []SchedulingPolicy `json:"schedulingPolicies"`
	}{orEmpty(each(ps, schedulingPolicyOf))}, nil
}

func (s *Handler) listSchedulingPolicies(ctx context.Context, in *listSchedulingPoliciesRequest) (any, error) {
	var c check
	page := c.page(in.pageRequest)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:ListSchedulingPolicies", access.AnyResource); err != nil {
		return nil, err
	}
	ps, next, err := s.eng.ListSchedulingPolicies(ctx, page)
	if err != nil {
		return nil, err
	}
	// A listing carries only the ARN (SchedulingPolicyListingDetail).
	type listing struct {
		Arn string `json:"arn"`
	}
	out := struct {
		SchedulingPolicies []listing `json:"schedulingPolicies"`
		NextToken          string    `json:"nextToken,omitempty"`
	}{SchedulingPolicies: make([]listing, len(ps)), NextToken: next}
	for i, p := range ps {
		out.SchedulingPolicies[i] = listing{p.Arn}
	}
	return out, nil
}

// policies checks the two kinds of policy a scheduling policy may hold
// (at most one) and converts them to the engine's forms.
func (c *check) policies(qs *quotaSharePolicy, fs *fairsharePolicy) (*record.QuotaSharePolicy, json.RawMessage) {
	if qs != nil && fs != nil {
		c.failf("Only one of fairsharePolicy and quotaSharePolicy can be specified")
		return nil, nil
	}
	var eqs *record.QuotaSharePolicy
	if qs != nil {
		c.required("quotaSharePolicy.idleResourceAssignmentStrategy", qs.IdleResourceAssignmentStrategy)
		c.enum("quotaSharePolicy.idleResourceAssignmentStrategy", qs.IdleResourceAssignmentStrategy, "FIFO")
		eqs = &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: qs.IdleResourceAssignmentStrategy}
	}
	var efs json.RawMessage
	if fs != nil {
		c.fairshare(fs)
		efs, _ = json.Marshal(fs) // plain ints, floats and strings: cannot fail
	}
	return eqs, efs
}

// fairshare checks a fair-share policy against AWS's documented ranges.
func (c *check) fairshare(fs *fairsharePolicy) {
	c.between("fairsharePolicy.shareDecaySeconds", fs.ShareDecaySeconds, 0, 604800)
	c.between("fairsharePolicy.computeReservation", fs.ComputeReservation, 0, 99)
	for i, sa := range fs.ShareDistribution {
		f := at("fairsharePolicy.shareDistribution", i)
		if c.required(f+".shareIdentifier", sa.ShareIdentifier) {
			c.length(f+".shareIdentifier", sa.ShareIdentifier, 1, 255)
		}
		if w := sa.WeightFactor; w != nil && (*w < 0.0001 || *w > 999.9999) {
			c.failf("%s.weightFactor must be between 0.0001 and 999.9999, not %g", f, *w)
		}
		for _, prev := range fs.ShareDistribution[:i] {
			if batchmodel.ShareIdentifiersOverlap(prev.ShareIdentifier, sa.ShareIdentifier) {
				c.failf("%s.shareIdentifier %s overlaps %s: the share identifiers of a fair-share policy can't overlap", f, sa.ShareIdentifier, prev.ShareIdentifier)
				break
			}
		}
	}
}

// orEmpty turns a nil list into an empty one, since the wire shapes have
// lists that are present even when empty.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
