package batchapi

import (
	"context"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

type resourceSharingConfiguration struct {
	Strategy    string `json:"strategy"`
	BorrowLimit *int   `json:"borrowLimit"`
}

type sharePreemptionConfiguration struct {
	InSharePreemption string `json:"inSharePreemption"`
}

type createQuotaShareRequest struct {
	QuotaShareName               string                        `json:"quotaShareName"`
	JobQueue                     string                        `json:"jobQueue"`
	CapacityLimits               []capacityLimit               `json:"capacityLimits"`
	ResourceSharingConfiguration *resourceSharingConfiguration `json:"resourceSharingConfiguration"`
	PreemptionConfiguration      *sharePreemptionConfiguration `json:"preemptionConfiguration"`
	State                        string                        `json:"state"`
	Tags                         map[string]string             `json:"tags"`
}

type updateQuotaShareRequest struct {
	QuotaShareArn                string                        `json:"quotaShareArn"`
	CapacityLimits               []capacityLimit               `json:"capacityLimits"`
	ResourceSharingConfiguration *resourceSharingConfiguration `json:"resourceSharingConfiguration"`
	PreemptionConfiguration      *sharePreemptionConfiguration `json:"preemptionConfiguration"`
	State                        string                        `json:"state"`
}

type quotaShareArnRequest struct {
	QuotaShareArn string `json:"quotaShareArn"`
}

type listQuotaSharesRequest struct {
	JobQueue string `json:"jobQueue"`
	pageRequest
}

// quotaShareRef is the output of Create and Update.
type quotaShareRef struct {
	QuotaShareArn  string `json:"quotaShareArn"`
	QuotaShareName string `json:"quotaShareName"`
}

func (s *Handler) createQuotaShare(ctx context.Context, in *createQuotaShareRequest) (any, error) {
	var c check
	c.name("quotaShareName", in.QuotaShareName)
	c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue)
	limits := c.capacityLimits("capacityLimits", in.CapacityLimits, true, minShareCapacity)
	if present(&c, "resourceSharingConfiguration", in.ResourceSharingConfiguration) {
		c.resourceSharing(in.ResourceSharingConfiguration)
	}
	if present(&c, "preemptionConfiguration", in.PreemptionConfiguration) {
		c.sharePreemption(in.PreemptionConfiguration)
	}
	c.enum("state", in.State, "ENABLED", "DISABLED")
	c.tags("tags", in.Tags)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:CreateQuotaShare", s.base.QuotaShareIn(in.JobQueue, in.QuotaShareName)); err != nil {
		return nil, err
	}
	qs, err := s.eng.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{
		Name: in.QuotaShareName, JobQueue: in.JobQueue, CapacityLimits: limits,
		ResourceSharingConfiguration: *toResourceSharing(in.ResourceSharingConfiguration),
		PreemptionConfiguration:      *toSharePreemption(in.PreemptionConfiguration),
		State:                        in.State, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return quotaShareRef{qs.QuotaShareArn, qs.QuotaShareName}, nil
}

func (s *Handler) updateQuotaShare(ctx context.Context, in *updateQuotaShareRequest) (any, error) {
	var c check
	c.arnOf("quotaShareArn", in.QuotaShareArn, arn.QuotaShare)
	limits := c.capacityLimits("capacityLimits", in.CapacityLimits, false, minShareCapacity)
	if in.ResourceSharingConfiguration != nil {
		c.resourceSharing(in.ResourceSharingConfiguration)
	}
	if in.PreemptionConfiguration != nil {
		c.sharePreemption(in.PreemptionConfiguration)
	}
	c.enum("state", in.State, "ENABLED", "DISABLED")
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:UpdateQuotaShare", in.QuotaShareArn); err != nil {
		return nil, err
	}
	qs, err := s.eng.UpdateQuotaShare(ctx, batchmodel.UpdateQuotaShareInput{
		QuotaShareArn: in.QuotaShareArn, CapacityLimits: limits,
		ResourceSharingConfiguration: toResourceSharing(in.ResourceSharingConfiguration),
		PreemptionConfiguration:      toSharePreemption(in.PreemptionConfiguration),
		State:                        in.State,
	})
	if err != nil {
		return nil, err
	}
	return quotaShareRef{qs.QuotaShareArn, qs.QuotaShareName}, nil
}

func (s *Handler) deleteQuotaShare(ctx context.Context, in *quotaShareArnRequest) (any, error) {
	var c check
	if c.arnOf("quotaShareArn", in.QuotaShareArn, arn.QuotaShare); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DeleteQuotaShare", in.QuotaShareArn); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.DeleteQuotaShare(ctx, in.QuotaShareArn)
}

func (s *Handler) describeQuotaShare(ctx context.Context, in *quotaShareArnRequest) (any, error) {
	var c check
	if c.arnOf("quotaShareArn", in.QuotaShareArn, arn.QuotaShare); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DescribeQuotaShare", in.QuotaShareArn); err != nil {
		return nil, err
	}
	qs, err := s.eng.DescribeQuotaShare(ctx, in.QuotaShareArn)
	if err != nil {
		return nil, err
	}
	return quotaShareOf(qs), nil
}

func (s *Handler) listQuotaShares(ctx context.Context, in *listQuotaSharesRequest) (any, error) {
	var c check
	c.nameOrARN("jobQueue", in.JobQueue, arn.JobQueue)
	page := c.page(in.pageRequest)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:ListQuotaShares", s.base.Of(arn.JobQueue, in.JobQueue)); err != nil {
		return nil, err
	}
	qss, next, err := s.eng.ListQuotaShares(ctx, in.JobQueue, page)
	if err != nil {
		return nil, err
	}
	out := make([]QuotaShare, len(qss))
	for i, qs := range qss {
		out[i] = quotaShareOf(qs)
		out[i].Tags = nil // QuotaShareDetail is DescribeQuotaShare's output without tags
	}
	return struct {
		QuotaShares []QuotaShare `json:"quotaShares"`
		NextToken   string       `json:"nextToken,omitempty"`
	}{out, next}, nil
}

// resourceSharing checks a share's strategy; borrowLimit (a percentage of
// maxCapacity, -1 for unlimited) applies only to LEND_AND_BORROW.
func (c *check) resourceSharing(r *resourceSharingConfiguration) {
	const f = "resourceSharingConfiguration"
	c.required(f+".strategy", r.Strategy)
	c.enum(f+".strategy", r.Strategy, "RESERVE", "LEND", "LEND_AND_BORROW")
	if r.BorrowLimit != nil && r.Strategy != "LEND_AND_BORROW" {
		c.failf("%s.borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW", f)
	}
	c.atLeast(f+".borrowLimit", r.BorrowLimit, -1)
	c.int32Member(f+".borrowLimit", r.BorrowLimit)
}

func (c *check) sharePreemption(p *sharePreemptionConfiguration) {
	c.required("preemptionConfiguration.inSharePreemption", p.InSharePreemption)
	c.enum("preemptionConfiguration.inSharePreemption", p.InSharePreemption, "ENABLED", "DISABLED")
}

func toResourceSharing(r *resourceSharingConfiguration) *record.ResourceSharingConfiguration {
	if r == nil {
		return nil
	}
	return &record.ResourceSharingConfiguration{Strategy: r.Strategy, BorrowLimit: r.BorrowLimit}
}

func toSharePreemption(p *sharePreemptionConfiguration) *record.QuotaSharePreemptionConfiguration {
	if p == nil {
		return nil
	}
	return &record.QuotaSharePreemptionConfiguration{InSharePreemption: p.InSharePreemption}
}
