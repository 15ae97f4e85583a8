package e2e

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// jobStateTimeLimitActions.maxTimeSeconds must lie in 600..86400 on create
// and on update; a refused update changes nothing. The shortest action
// takes 600 s, too long to wait for here.
func TestJobStateTimeLimitActionBounds(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := s.client()
	setUpWalkthrough(t, c, 3)
	_, err := c.CreateServiceEnvironment(ctx(t), &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("se-bounds"),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining,
		CapacityLimits:         []types.CapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(1)}}})
	fatalIf(t, "CreateServiceEnvironment", err)
	createQueue := func(actions ...types.JobStateTimeLimitAction) error {
		_, err := c.CreateJobQueue(ctx(t), &batch.CreateJobQueueInput{JobQueueName: aws.String("jq-bounds"), Priority: aws.Int32(1),
			JobQueueType: types.JobQueueTypeSagemakerTraining, SchedulingPolicyArn: aws.String(policyArn),
			ServiceEnvironmentOrder:  []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("se-bounds")}},
			JobStateTimeLimitActions: actions})
		return err
	}
	updateQueue := func(actions ...types.JobStateTimeLimitAction) error {
		if actions == nil {
			actions = []types.JobStateTimeLimitAction{}
		}
		_, err := c.UpdateJobQueue(ctx(t), &batch.UpdateJobQueueInput{JobQueue: aws.String(queueName), JobStateTimeLimitActions: actions})
		return err
	}
	// actionsOf describes a queue's actions as maxTimeSeconds/reason.
	actionsOf := func(queue string) []string {
		t.Helper()
		out, err := c.DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{JobQueues: []string{queue}})
		fatalIf(t, "DescribeJobQueues", err)
		if len(out.JobQueues) != 1 {
			t.Fatalf("DescribeJobQueues %s found %d queues, want 1", queue, len(out.JobQueues))
		}
		got := []string{}
		for _, a := range out.JobQueues[0].JobStateTimeLimitActions {
			got = append(got, fmt.Sprintf("%s %s %d %s", a.Action, a.State, aws.ToInt32(a.MaxTimeSeconds), aws.ToString(a.Reason)))
		}
		return got
	}

	for _, secs := range []int32{0, 599, 86401} {
		want := fmt.Sprintf("jobStateTimeLimitActions[0].maxTimeSeconds must be between 600 and 86400, not %d", secs)
		wantClientException(t, fmt.Sprintf("CreateJobQueue with maxTimeSeconds %d", secs), createQueue(timeLimitAction(secs)), want)
		wantClientException(t, fmt.Sprintf("UpdateJobQueue with maxTimeSeconds %d", secs), updateQueue(timeLimitAction(secs)), want)
		wantClientException(t, fmt.Sprintf("UpdateJobQueue with a good action and maxTimeSeconds %d", secs),
			updateQueue(timeLimitAction(600), timeLimitAction(secs)),
			fmt.Sprintf("jobStateTimeLimitActions[1].maxTimeSeconds must be between 600 and 86400, not %d", secs))
	}
	if got := actionsOf(queueName); len(got) != 0 {
		t.Errorf("refused updates changed the queue's actions to %v, want none", got)
	}
	out, err := c.DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{JobQueues: []string{"jq-bounds"}})
	fatalIf(t, "DescribeJobQueues", err)
	if len(out.JobQueues) != 0 {
		t.Errorf("refused creates left job queue %s", js(out.JobQueues))
	}

	// The bounds themselves are accepted.
	capacity := types.JobStateTimeLimitAction{Action: types.JobStateTimeLimitActionsActionTerminate, MaxTimeSeconds: aws.Int32(86400),
		Reason: aws.String("CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"), State: types.JobStateTimeLimitActionsStateRunnable}
	fatalIf(t, "UpdateJobQueue with maxTimeSeconds 600 and 86400", updateQueue(timeLimitAction(600), capacity))
	want := []string{"TERMINATE RUNNABLE 600 MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED", "TERMINATE RUNNABLE 86400 CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"}
	if got := actionsOf(queueName); !slices.Equal(got, want) {
		t.Errorf("actions after UpdateJobQueue %v, want %v", got, want)
	}
	fatalIf(t, "CreateJobQueue with maxTimeSeconds 600", createQueue(timeLimitAction(600)))
	if got, want := actionsOf("jq-bounds"), want[:1]; !slices.Equal(got, want) {
		t.Errorf("actions of the created queue %v, want %v", got, want)
	}
	// An empty list clears them.
	fatalIf(t, "UpdateJobQueue with no actions", updateQueue())
	if got := actionsOf(queueName); len(got) != 0 {
		t.Errorf("actions after clearing %v, want none", got)
	}
	s.stop()
}
