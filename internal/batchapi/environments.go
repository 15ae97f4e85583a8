package batchapi

import (
	"context"
	"math"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// The only service type sharq serves.
const sageMakerTraining = "SAGEMAKER_TRAINING"

// The least maxCapacity of a limit. A share's is 1 (AWS's documented
// minimum); a service environment may hold 0 of a type, e.g. while its
// machines are away.
const (
	minShareCapacity       = 1
	minEnvironmentCapacity = 0
)

type capacityLimit struct {
	CapacityUnit string `json:"capacityUnit"`
	MaxCapacity  *int   `json:"maxCapacity"`
}

type createServiceEnvironmentRequest struct {
	ServiceEnvironmentName string            `json:"serviceEnvironmentName"`
	ServiceEnvironmentType string            `json:"serviceEnvironmentType"`
	State                  string            `json:"state"`
	CapacityLimits         []capacityLimit   `json:"capacityLimits"`
	Tags                   map[string]string `json:"tags"`
}

type updateServiceEnvironmentRequest struct {
	ServiceEnvironment string          `json:"serviceEnvironment"`
	State              string          `json:"state"`
	CapacityLimits     []capacityLimit `json:"capacityLimits"`
}

type deleteServiceEnvironmentRequest struct {
	ServiceEnvironment string `json:"serviceEnvironment"`
}

type describeServiceEnvironmentsRequest struct {
	ServiceEnvironments []string `json:"serviceEnvironments"`
	pageRequest
}

// serviceEnvironmentRef is the output of Create and Update.
type serviceEnvironmentRef struct {
	ServiceEnvironmentArn  string `json:"serviceEnvironmentArn"`
	ServiceEnvironmentName string `json:"serviceEnvironmentName"`
}

func (s *Handler) createServiceEnvironment(ctx context.Context, in *createServiceEnvironmentRequest) (any, error) {
	var c check
	c.name("serviceEnvironmentName", in.ServiceEnvironmentName)
	c.required("serviceEnvironmentType", in.ServiceEnvironmentType)
	c.enum("serviceEnvironmentType", in.ServiceEnvironmentType, sageMakerTraining)
	c.enum("state", in.State, "ENABLED", "DISABLED")
	limits := c.capacityLimits("capacityLimits", in.CapacityLimits, true, minEnvironmentCapacity)
	c.tags("tags", in.Tags)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:CreateServiceEnvironment", s.base.ServiceEnvironment(in.ServiceEnvironmentName)); err != nil {
		return nil, err
	}
	se, err := s.eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{
		Name: in.ServiceEnvironmentName, Type: in.ServiceEnvironmentType,
		CapacityLimits: limits, State: in.State, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return serviceEnvironmentRef{se.ServiceEnvironmentArn, se.ServiceEnvironmentName}, nil
}

func (s *Handler) updateServiceEnvironment(ctx context.Context, in *updateServiceEnvironmentRequest) (any, error) {
	var c check
	c.nameOrARN("serviceEnvironment", in.ServiceEnvironment, arn.ServiceEnvironment)
	c.enum("state", in.State, "ENABLED", "DISABLED")
	limits := c.capacityLimits("capacityLimits", in.CapacityLimits, false, minEnvironmentCapacity)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:UpdateServiceEnvironment", s.base.Of(arn.ServiceEnvironment, in.ServiceEnvironment)); err != nil {
		return nil, err
	}
	se, err := s.eng.UpdateServiceEnvironment(ctx, batchmodel.UpdateServiceEnvironmentInput{
		ServiceEnvironment: in.ServiceEnvironment, CapacityLimits: limits, State: in.State,
	})
	if err != nil {
		return nil, err
	}
	return serviceEnvironmentRef{se.ServiceEnvironmentArn, se.ServiceEnvironmentName}, nil
}

func (s *Handler) deleteServiceEnvironment(ctx context.Context, in *deleteServiceEnvironmentRequest) (any, error) {
	var c check
	if c.nameOrARN("serviceEnvironment", in.ServiceEnvironment, arn.ServiceEnvironment); c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DeleteServiceEnvironment", s.base.Of(arn.ServiceEnvironment, in.ServiceEnvironment)); err != nil {
		return nil, err
	}
	return noBody{}, s.eng.DeleteServiceEnvironment(ctx, in.ServiceEnvironment)
}

func (s *Handler) describeServiceEnvironments(ctx context.Context, in *describeServiceEnvironmentsRequest) (any, error) {
	var c check
	c.count("serviceEnvironments", len(in.ServiceEnvironments), 0, maxListItems)
	for i, se := range in.ServiceEnvironments {
		c.nameOrARN(at("serviceEnvironments", i), se, arn.ServiceEnvironment)
	}
	page := c.page(in.pageRequest)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.authorize(ctx, "batch:DescribeServiceEnvironments", access.AnyResource); err != nil {
		return nil, err
	}
	ses, next, err := s.eng.DescribeServiceEnvironments(ctx, in.ServiceEnvironments, page)
	if err != nil {
		return nil, err
	}
	return struct {
		ServiceEnvironments []ServiceEnvironment `json:"serviceEnvironments"`
		NextToken           string               `json:"nextToken,omitempty"`
	}{orEmpty(each(ses, serviceEnvironmentOf)), next}, nil
}

// capacityLimits checks a list of capacity limits: each names its unit
// once, with a maxCapacity of at least least. An absent list is an error
// only when required; a present one has at least one entry. The upper
// bound on the count is the engine's (it is configurable).
func (c *check) capacityLimits(field string, ls []capacityLimit, required bool, least int) []record.CapacityLimit {
	if ls == nil {
		if required {
			c.failf("%s is required", field)
		}
		return nil
	}
	c.count(field, len(ls), 1, math.MaxInt)
	out := make([]record.CapacityLimit, len(ls))
	seen := make(map[string]bool, len(ls))
	for i, l := range ls {
		f := at(field, i)
		c.required(f+".capacityUnit", l.CapacityUnit)
		if present(c, f+".maxCapacity", l.MaxCapacity) {
			c.atLeast(f+".maxCapacity", l.MaxCapacity, least)
			c.int32Member(f+".maxCapacity", l.MaxCapacity)
			out[i].MaxCapacity = *l.MaxCapacity
		}
		if seen[l.CapacityUnit] {
			c.failf("%s has more than one limit for capacityUnit %q", field, l.CapacityUnit)
		}
		seen[l.CapacityUnit] = true
		out[i].CapacityUnit = l.CapacityUnit
	}
	return out
}
