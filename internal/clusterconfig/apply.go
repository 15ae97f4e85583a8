package clusterconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// Apply creates every resource of c on an engine that has none of them, in
// dependency order: policies, environments, queues, then quota shares (with
// their sharq settings). It stops at the first refusal, naming the
// resource.
func Apply(ctx context.Context, e *engine.Engine, c *Config) error {
	policyArn := map[string]string{}
	for _, p := range c.SchedulingPolicies {
		out, err := e.CreateSchedulingPolicy(ctx, PolicyInput(p))
		if err != nil {
			return fmt.Errorf("create scheduling policy %s: %w", p.Name, err)
		}
		policyArn[p.Name] = out.Arn
	}
	for _, se := range c.ServiceEnvironments {
		if _, err := e.CreateServiceEnvironment(ctx, EnvInput(se)); err != nil {
			return fmt.Errorf("create service environment %s: %w", se.Name, err)
		}
	}
	for _, q := range c.JobQueues {
		if _, err := e.CreateJobQueue(ctx, QueueInput(q, policyArn[q.SchedulingPolicy])); err != nil {
			return fmt.Errorf("create job queue %s: %w", q.Name, err)
		}
		for _, s := range q.QuotaShares {
			rec, err := e.CreateQuotaShare(ctx, ShareInput(q.Name, s))
			if err != nil {
				return fmt.Errorf("create quota share %s of job queue %s: %w", s.Name, q.Name, err)
			}
			if n := int(s.MinimumRuntime() / time.Second); n > 0 {
				if _, err := e.SetQuotaShareMinimumRuntime(ctx, rec.QuotaShareArn, n); err != nil {
					return fmt.Errorf("set the minimum runtime of quota share %s of job queue %s: %w", s.Name, q.Name, err)
				}
			}
		}
	}
	return nil
}

// PolicyInput is the CreateSchedulingPolicy request for p.
func PolicyInput(p SchedulingPolicy) batchmodel.CreateSchedulingPolicyInput {
	in := batchmodel.CreateSchedulingPolicyInput{Name: p.Name, Tags: p.Tags}
	if qp := p.QuotaSharePolicy; qp != nil {
		in.QuotaSharePolicy = &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: orDefault(qp.IdleResourceAssignmentStrategy, "FIFO")}
	}
	if fp := p.FairsharePolicy; fp != nil {
		in.FairsharePolicy = fairshareJSON(fp)
	}
	return in
}

// EnvInput is the CreateServiceEnvironment request for se.
func EnvInput(se ServiceEnvironment) batchmodel.CreateServiceEnvironmentInput {
	return batchmodel.CreateServiceEnvironmentInput{
		Name: se.Name, Type: orDefault(se.Type, "SAGEMAKER_TRAINING"), State: orDefault(se.State, "ENABLED"),
		CapacityLimits: limits(se.CapacityLimits), Tags: se.Tags,
	}
}

// QueueInput is the CreateJobQueue request for q, given the ARN of its
// scheduling policy ("" for none).
func QueueInput(q JobQueue, policyArn string) batchmodel.CreateJobQueueInput {
	in := batchmodel.CreateJobQueueInput{
		Name: q.Name, Priority: q.Priority, Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: policyArn,
		State: orDefault(q.State, "ENABLED"), Tags: q.Tags,
	}
	for i, se := range q.ServiceEnvironments {
		in.ServiceEnvironmentOrder = append(in.ServiceEnvironmentOrder, record.ServiceEnvironmentOrder{Order: i + 1, ServiceEnvironment: se})
	}
	for _, a := range q.JobStateTimeLimitActions {
		in.JobStateTimeLimitActions = append(in.JobStateTimeLimitActions, record.JobStateTimeLimitAction{
			Action: orDefault(a.Action, "TERMINATE"), MaxTimeSeconds: a.MaxTimeSeconds, Reason: a.Reason, State: orDefault(a.State, "RUNNABLE"),
		})
	}
	return in
}

// ShareInput is the CreateQuotaShare request for s in the named queue.
func ShareInput(queue string, s QuotaShare) batchmodel.CreateQuotaShareInput {
	return batchmodel.CreateQuotaShareInput{
		Name: s.Name, JobQueue: queue, CapacityLimits: limits(s.CapacityLimits),
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{
			Strategy: s.ResourceSharingConfiguration.Strategy, BorrowLimit: s.ResourceSharingConfiguration.BorrowLimit,
		},
		PreemptionConfiguration: record.QuotaSharePreemptionConfiguration{InSharePreemption: orDefault(s.PreemptionConfiguration.InSharePreemption, "DISABLED")},
		State:                   orDefault(s.State, "ENABLED"), Tags: s.Tags,
	}
}

func limits(ls []CapacityLimit) []record.CapacityLimit {
	out := make([]record.CapacityLimit, len(ls))
	for i, l := range ls {
		out[i] = record.CapacityLimit{CapacityUnit: l.CapacityUnit, MaxCapacity: l.MaxCapacity}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fairshareJSON is a fair-share policy as the API takes it.
func fairshareJSON(fp *FairsharePolicy) json.RawMessage {
	type share struct {
		ShareIdentifier string   `json:"shareIdentifier"`
		WeightFactor    *float64 `json:"weightFactor,omitempty"`
	}
	out := struct {
		ShareDecaySeconds  int     `json:"shareDecaySeconds"`
		ComputeReservation int     `json:"computeReservation"`
		ShareDistribution  []share `json:"shareDistribution,omitempty"`
	}{ShareDecaySeconds: fp.ShareDecaySeconds, ComputeReservation: fp.ComputeReservation}
	for _, d := range fp.ShareDistribution {
		out.ShareDistribution = append(out.ShareDistribution, share(d))
	}
	b, _ := json.Marshal(out) // ints, floats and strings: cannot fail
	return b
}
