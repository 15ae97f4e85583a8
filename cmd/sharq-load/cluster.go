package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// queueConfig is a quota-share job queue with its own service environment
// of one instance type.
type queueConfig struct {
	Name         string
	InstanceType string
	Capacity     int // the service environment's maxCapacity
	Shares       []shareConfig
}

type shareConfig struct {
	Name        string
	Capacity    int
	Strategy    types.QuotaShareResourceSharingStrategy
	BorrowLimit int // percent; used with LEND_AND_BORROW
	InShare     bool
}

// createQueues creates a scheduling policy named policy and each queue
// with its environment and shares, through the SDK.
func createQueues(ctx context.Context, c *client, policy string, qs []queueConfig) error {
	pol, err := c.sdk.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{
		Name:             aws.String(policy),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo},
	})
	if err != nil {
		return fmt.Errorf("create scheduling policy: %w", err)
	}
	for _, q := range qs {
		env := q.Name + "-se"
		if _, err := c.sdk.CreateServiceEnvironment(ctx, &batch.CreateServiceEnvironmentInput{
			ServiceEnvironmentName: aws.String(env), ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining,
			CapacityLimits: []types.CapacityLimit{{CapacityUnit: aws.String(q.InstanceType), MaxCapacity: aws.Int32(int32(q.Capacity))}},
		}); err != nil {
			return fmt.Errorf("create service environment %s: %w", env, err)
		}
		if _, err := c.sdk.CreateJobQueue(ctx, &batch.CreateJobQueueInput{
			JobQueueName: aws.String(q.Name), JobQueueType: types.JobQueueTypeSagemakerTraining, Priority: aws.Int32(1),
			SchedulingPolicyArn:     pol.Arn,
			ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String(env)}},
		}); err != nil {
			return fmt.Errorf("create job queue %s: %w", q.Name, err)
		}
		for _, s := range q.Shares {
			rs := &types.QuotaShareResourceSharingConfiguration{Strategy: s.Strategy}
			if s.Strategy == types.QuotaShareResourceSharingStrategyLendAndBorrow {
				rs.BorrowLimit = aws.Int32(int32(s.BorrowLimit))
			}
			pre := types.QuotaShareInSharePreemptionStateDisabled
			if s.InShare {
				pre = types.QuotaShareInSharePreemptionStateEnabled
			}
			if _, err := c.sdk.CreateQuotaShare(ctx, &batch.CreateQuotaShareInput{
				QuotaShareName: aws.String(s.Name), JobQueue: aws.String(q.Name),
				CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String(q.InstanceType), MaxCapacity: aws.Int32(int32(s.Capacity))}},
				ResourceSharingConfiguration: rs,
				PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: pre},
			}); err != nil {
				return fmt.Errorf("create quota share %s/%s: %w", q.Name, s.Name, err)
			}
		}
	}
	return nil
}

// evenQueue is a queue of n LEND_AND_BORROW shares that split capacity
// evenly.
func evenQueue(name, instanceType string, capacity, n int) queueConfig {
	q := queueConfig{Name: name, InstanceType: instanceType, Capacity: capacity}
	for i := range n {
		q.Shares = append(q.Shares, shareConfig{
			Name: fmt.Sprintf("s%d", i), Capacity: max(1, capacity/n),
			Strategy: types.QuotaShareResourceSharingStrategyLendAndBorrow, BorrowLimit: 500, InShare: true,
		})
	}
	return q
}
