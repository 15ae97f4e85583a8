package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

func (p *planner) queue(q clusterconfig.JobQueue) error {
	want := clusterconfig.QueueInput(q, "")
	have, ok := p.cur.queues[q.Name]
	if !ok {
		p.createQueue(q)
		return nil
	}
	if have.JobQueueType != "" && string(have.JobQueueType) != want.Type {
		return usagef("job queue %s is of type %s on the server; a type cannot change", q.Name, have.JobQueueType)
	}
	p.updateQueue(q, have)
	p.tagChange("job queue", q.Name, aws.ToString(have.JobQueueArn), have.Tags, want.Tags)
	return nil
}

func (p *planner) createQueue(q clusterconfig.JobQueue) {
	want := clusterconfig.QueueInput(q, "")
	details := []string{fmt.Sprintf("priority %d", want.Priority), "environments " + strings.Join(q.ServiceEnvironments, ",")}
	if q.SchedulingPolicy != "" {
		details = append(details, "policy "+q.SchedulingPolicy)
	}
	p.add("create", "job queue", q.Name, details, func(ctx context.Context) error {
		_, err := p.c.batch.CreateJobQueue(ctx, &batch.CreateJobQueueInput{
			JobQueueName: aws.String(q.Name), Priority: aws.Int32(int32(want.Priority)), JobQueueType: types.JobQueueType(want.Type),
			ServiceEnvironmentOrder: sdkEnvOrder(want.ServiceEnvironmentOrder), SchedulingPolicyArn: p.policyArn(q.SchedulingPolicy),
			State: types.JQState(want.State), JobStateTimeLimitActions: sdkActions(want.JobStateTimeLimitActions), Tags: want.Tags,
		})
		return err
	})
}

// updateQueue sends only what differs: UpdateJobQueue leaves the rest.
func (p *planner) updateQueue(q clusterconfig.JobQueue, have types.JobQueueDetail) {
	want := clusterconfig.QueueInput(q, "")
	in := &batch.UpdateJobQueueInput{JobQueue: aws.String(q.Name)}
	var d diffs
	if h := int(aws.ToInt32(have.Priority)); h != want.Priority {
		d.add("priority", h, want.Priority)
		in.Priority = aws.Int32(int32(want.Priority))
	}
	if string(have.State) != want.State {
		d.add("state", have.State, want.State)
		in.State = types.JQState(want.State)
	}
	newPolicy := false
	if h := nameOf(aws.ToString(have.SchedulingPolicyArn)); h != q.SchedulingPolicy {
		d.add("policy", orDash(h), orDash(q.SchedulingPolicy))
		newPolicy = true
	}
	if h, w := envOrderText(have.ServiceEnvironmentOrder), strings.Join(q.ServiceEnvironments, ","); h != w {
		d.add("environments", h, w)
		in.ServiceEnvironmentOrder = sdkEnvOrder(want.ServiceEnvironmentOrder)
	}
	if h, w := sdkActionsText(have.JobStateTimeLimitActions), actionsText(want.JobStateTimeLimitActions); h != w {
		d.add("jobStateTimeLimitActions", orDash(h), orDash(w))
		in.JobStateTimeLimitActions = sdkActions(want.JobStateTimeLimitActions)
		if in.JobStateTimeLimitActions == nil {
			in.JobStateTimeLimitActions = []types.JobStateTimeLimitAction{} // [] clears them; nil would leave them
		}
	}
	if len(d) > 0 {
		p.add("update", "job queue", q.Name, d, func(ctx context.Context) error {
			if newPolicy {
				in.SchedulingPolicyArn = p.policyArn(q.SchedulingPolicy)
			}
			_, err := p.c.batch.UpdateJobQueue(ctx, in)
			return err
		})
	}
}

// policyArn is the ARN of a named policy. Changes call it when they run,
// as the policy may only exist once an earlier change has created it.
func (p *planner) policyArn(name string) *string {
	if name == "" {
		return nil
	}
	return aws.String(p.policyArns[name])
}

// nameOf is the name at the end of an ARN, "" for none.
func nameOf(arn string) string {
	if arn == "" {
		return ""
	}
	return baseName(arn)
}

func envOrderText(os []types.ServiceEnvironmentOrder) string {
	sorted := slices.Clone(os)
	slices.SortFunc(sorted, func(a, b types.ServiceEnvironmentOrder) int {
		return cmp.Compare(aws.ToInt32(a.Order), aws.ToInt32(b.Order))
	})
	var names []string
	for _, o := range sorted {
		names = append(names, nameOf(aws.ToString(o.ServiceEnvironment)))
	}
	return strings.Join(names, ",")
}

func sdkEnvOrder(os []record.ServiceEnvironmentOrder) []types.ServiceEnvironmentOrder {
	out := make([]types.ServiceEnvironmentOrder, len(os))
	for i, o := range os {
		out[i] = types.ServiceEnvironmentOrder{Order: aws.Int32(int32(o.Order)), ServiceEnvironment: aws.String(o.ServiceEnvironment)}
	}
	return out
}

func sdkActions(as []record.JobStateTimeLimitAction) []types.JobStateTimeLimitAction {
	var out []types.JobStateTimeLimitAction
	for _, a := range as {
		out = append(out, types.JobStateTimeLimitAction{
			Action: types.JobStateTimeLimitActionsAction(a.Action), MaxTimeSeconds: aws.Int32(int32(a.MaxTimeSeconds)),
			Reason: aws.String(a.Reason), State: types.JobStateTimeLimitActionsState(a.State),
		})
	}
	return out
}

func actionsText(as []record.JobStateTimeLimitAction) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, fmt.Sprintf("%s %s after %ds in %s", a.Action, a.Reason, a.MaxTimeSeconds, a.State))
	}
	return strings.Join(parts, ", ")
}

func sdkActionsText(as []types.JobStateTimeLimitAction) string {
	var out []record.JobStateTimeLimitAction
	for _, a := range as {
		out = append(out, record.JobStateTimeLimitAction{Action: string(a.Action), MaxTimeSeconds: int(aws.ToInt32(a.MaxTimeSeconds)),
			Reason: aws.ToString(a.Reason), State: string(a.State)})
	}
	return actionsText(out)
}

func (p *planner) share(queue string, s clusterconfig.QuotaShare) {
	want := clusterconfig.ShareInput(queue, s)
	name := queue + "/" + s.Name
	have := p.cur.shares[queue][s.Name]
	if have == nil {
		p.createShare(queue, name, s)
	} else {
		p.updateShare(queue, name, s, have)
		p.tagChange("quota share", name, aws.ToString(have.QuotaShareArn), have.Tags, want.Tags)
	}
	p.shareSettings(queue, s)
}

func (p *planner) createShare(queue, name string, s clusterconfig.QuotaShare) {
	want := clusterconfig.ShareInput(queue, s)
	wantRSC := want.ResourceSharingConfiguration
	details := []string{limitsText(want.CapacityLimits), strategyText(wantRSC.Strategy, wantRSC.BorrowLimit),
		"in-share preemption " + want.PreemptionConfiguration.InSharePreemption}
	p.add("create", "quota share", name, details, func(ctx context.Context) error {
		_, err := p.c.batch.CreateQuotaShare(ctx, &batch.CreateQuotaShareInput{
			QuotaShareName: aws.String(s.Name), JobQueue: aws.String(queue), CapacityLimits: sdkShareLimits(want.CapacityLimits),
			ResourceSharingConfiguration: sdkSharing(wantRSC),
			PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionState(want.PreemptionConfiguration.InSharePreemption)},
			State:                        types.QuotaShareState(want.State), Tags: want.Tags,
		})
		return err
	})
}

// updateShare sends only what differs: UpdateQuotaShare is a partial update.
func (p *planner) updateShare(queue, name string, s clusterconfig.QuotaShare, have *batch.DescribeQuotaShareOutput) {
	want := clusterconfig.ShareInput(queue, s)
	wantRSC := want.ResourceSharingConfiguration
	in := &batch.UpdateQuotaShareInput{QuotaShareArn: have.QuotaShareArn}
	var d diffs
	var haveLimits []record.CapacityLimit
	for _, l := range have.CapacityLimits {
		haveLimits = append(haveLimits, record.CapacityLimit{CapacityUnit: aws.ToString(l.CapacityUnit), MaxCapacity: int(aws.ToInt32(l.MaxCapacity))})
	}
	if h, w := limitsText(haveLimits), limitsText(want.CapacityLimits); h != w {
		d.add("capacity", h, w)
		in.CapacityLimits = sdkShareLimits(want.CapacityLimits)
	}
	var haveStrategy string
	var haveBorrow *int
	if rsc := have.ResourceSharingConfiguration; rsc != nil {
		haveStrategy = string(rsc.Strategy)
		if rsc.BorrowLimit != nil {
			b := int(*rsc.BorrowLimit)
			haveBorrow = &b
		}
	}
	if h, w := strategyText(haveStrategy, haveBorrow), strategyText(wantRSC.Strategy, wantRSC.BorrowLimit); h != w {
		d.add("sharing", h, w)
		in.ResourceSharingConfiguration = sdkSharing(wantRSC)
	}
	var havePreempt string
	if pc := have.PreemptionConfiguration; pc != nil {
		havePreempt = string(pc.InSharePreemption)
	}
	if w := want.PreemptionConfiguration.InSharePreemption; havePreempt != w {
		d.add("in-share preemption", havePreempt, w)
		in.PreemptionConfiguration = &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionState(w)}
	}
	if string(have.State) != want.State {
		d.add("state", have.State, want.State)
		in.State = types.QuotaShareState(want.State)
	}
	if len(d) > 0 {
		p.add("update", "quota share", name, d, func(ctx context.Context) error {
			_, err := p.c.batch.UpdateQuotaShare(ctx, in)
			return err
		})
	}
}

// shareSettings sets sharq's own settings of a share where they differ
// from the server's (a new share has none), through sharq's route: AWS's
// UpdateQuotaShare has no field for them.
func (p *planner) shareSettings(queue string, s clusterconfig.QuotaShare) {
	want := int(s.MinimumRuntime() / time.Second)
	have := p.cur.minimums[queue][s.Name]
	if have == want {
		return
	}
	detail := fmt.Sprintf("minimum runtime %ds -> %ds", have, want)
	if p.cur.shares[queue][s.Name] == nil {
		detail = fmt.Sprintf("minimum runtime %ds", want) // the share is created just before
	}
	p.add("update", "quota share", queue+"/"+s.Name, []string{detail}, func(ctx context.Context) error {
		var out sharqapi.ShareSettings
		return p.c.putJSON(ctx, sharqapi.ShareSettingsPath(queue, s.Name), sharqapi.ShareSettings{MinimumRuntimeSeconds: want}, &out)
	})
}

// strategyText renders a sharing strategy with its borrow limit, which
// only LEND_AND_BORROW has; no limit and -1 both mean unlimited.
func strategyText(strategy string, borrow *int) string {
	if strategy != "LEND_AND_BORROW" {
		return strategy
	}
	if borrow == nil || *borrow < 0 {
		return strategy + " (no borrow limit)"
	}
	return fmt.Sprintf("%s (borrow limit %d%%)", strategy, *borrow)
}

func sdkSharing(r record.ResourceSharingConfiguration) *types.QuotaShareResourceSharingConfiguration {
	out := &types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategy(r.Strategy)}
	if r.BorrowLimit != nil {
		out.BorrowLimit = aws.Int32(int32(*r.BorrowLimit))
	}
	return out
}

func sdkShareLimits(ls []record.CapacityLimit) []types.QuotaShareCapacityLimit {
	out := make([]types.QuotaShareCapacityLimit, len(ls))
	for i, l := range ls {
		out[i] = types.QuotaShareCapacityLimit{CapacityUnit: aws.String(l.CapacityUnit), MaxCapacity: aws.Int32(int32(l.MaxCapacity))}
	}
	return out
}
