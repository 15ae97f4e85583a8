package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// serverState is what the server has of the resources a file names.
type serverState struct {
	policies map[string]types.SchedulingPolicyDetail
	envs     map[string]types.ServiceEnvironmentDetail
	queues   map[string]types.JobQueueDetail
	shares   map[string]map[string]*batch.DescribeQuotaShareOutput // queue, then share
	// minimums are sharq's minimum runtimes of the shares, in seconds.
	minimums map[string]map[string]int // queue, then share
}

func readServer(ctx context.Context, c *client, cfg *clusterconfig.Config) (*serverState, error) {
	st := &serverState{
		policies: map[string]types.SchedulingPolicyDetail{}, envs: map[string]types.ServiceEnvironmentDetail{},
		queues: map[string]types.JobQueueDetail{}, shares: map[string]map[string]*batch.DescribeQuotaShareOutput{},
	}
	if err := st.readPolicies(ctx, c); err != nil {
		return nil, err
	}
	for p := batch.NewDescribeServiceEnvironmentsPaginator(c.batch, &batch.DescribeServiceEnvironmentsInput{}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, se := range page.ServiceEnvironments {
			st.envs[aws.ToString(se.ServiceEnvironmentName)] = se
		}
	}
	for p := batch.NewDescribeJobQueuesPaginator(c.batch, &batch.DescribeJobQueuesInput{}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, q := range page.JobQueues {
			st.queues[aws.ToString(q.JobQueueName)] = q
		}
	}
	for _, q := range cfg.JobQueues {
		if _, ok := st.queues[q.Name]; ok {
			if err := st.readShares(ctx, c, q.Name); err != nil {
				return nil, err
			}
		}
	}
	var u sharqapi.Usage
	if err := c.getJSON(ctx, "/sharq/v1/shares", nil, &u); err != nil {
		return nil, err
	}
	st.minimums = map[string]map[string]int{}
	for _, q := range u.Queues {
		st.minimums[q.Name] = map[string]int{}
		for _, s := range q.Shares {
			st.minimums[q.Name][s.Name] = s.MinimumRuntimeSeconds
		}
	}
	return st, nil
}

func (st *serverState) readPolicies(ctx context.Context, c *client) error {
	var arns []string
	for p := batch.NewListSchedulingPoliciesPaginator(c.batch, &batch.ListSchedulingPoliciesInput{}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, l := range page.SchedulingPolicies {
			arns = append(arns, aws.ToString(l.Arn))
		}
	}
	for len(arns) > 0 {
		n := min(len(arns), 100) // DescribeSchedulingPolicies takes at most 100
		out, err := c.batch.DescribeSchedulingPolicies(ctx, &batch.DescribeSchedulingPoliciesInput{Arns: arns[:n]})
		if err != nil {
			return err
		}
		for _, pol := range out.SchedulingPolicies {
			st.policies[aws.ToString(pol.Name)] = pol
		}
		arns = arns[n:]
	}
	return nil
}

// readShares describes each share of a queue; the listing lacks tags.
func (st *serverState) readShares(ctx context.Context, c *client, queue string) error {
	st.shares[queue] = map[string]*batch.DescribeQuotaShareOutput{}
	for p := batch.NewListQuotaSharesPaginator(c.batch, &batch.ListQuotaSharesInput{JobQueue: aws.String(queue)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, s := range page.QuotaShares {
			d, err := c.batch.DescribeQuotaShare(ctx, &batch.DescribeQuotaShareInput{QuotaShareArn: s.QuotaShareArn})
			if err != nil {
				return err
			}
			st.shares[queue][aws.ToString(s.QuotaShareName)] = d
		}
	}
	return nil
}

// diffs collects "field old -> new" lines.
type diffs []string

func (d *diffs) add(field string, have, want any) {
	if fmt.Sprint(have) != fmt.Sprint(want) {
		*d = append(*d, fmt.Sprintf("%s %v -> %v", field, have, want))
	}
}

func (p *planner) policy(pol clusterconfig.SchedulingPolicy) error {
	want := clusterconfig.PolicyInput(pol)
	wantFair := sdkFairPolicy(pol.FairsharePolicy)
	have, ok := p.cur.policies[pol.Name]
	if !ok {
		p.add("create", "scheduling policy", pol.Name, []string{policyKind(want.QuotaSharePolicy, wantFair)}, func(ctx context.Context) error {
			out, err := p.c.batch.CreateSchedulingPolicy(ctx, &batch.CreateSchedulingPolicyInput{
				Name: aws.String(pol.Name), QuotaSharePolicy: sdkQuotaPolicy(want.QuotaSharePolicy), FairsharePolicy: wantFair, Tags: want.Tags,
			})
			if err == nil {
				p.policyArns[pol.Name] = aws.ToString(out.Arn)
			}
			return err
		})
		return nil
	}
	var haveQP *record.QuotaSharePolicy
	if qp := have.QuotaSharePolicy; qp != nil {
		haveQP = &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: string(qp.IdleResourceAssignmentStrategy)}
	}
	if want.QuotaSharePolicy == nil && haveQP != nil {
		return usagef("scheduling policy %s: its quotaSharePolicy cannot be removed (AWS Batch allows no switch of kind)", pol.Name)
	}
	if (wantFair == nil) != (have.FairsharePolicy == nil) {
		return usagef("scheduling policy %s: a fairsharePolicy can be neither added nor removed (AWS Batch allows no switch of kind)", pol.Name)
	}
	var d diffs
	d.add("policy", policyKind(haveQP, have.FairsharePolicy), policyKind(want.QuotaSharePolicy, wantFair))
	arn := aws.ToString(have.Arn)
	if len(d) > 0 {
		p.add("update", "scheduling policy", pol.Name, d, func(ctx context.Context) error {
			_, err := p.c.batch.UpdateSchedulingPolicy(ctx, &batch.UpdateSchedulingPolicyInput{Arn: aws.String(arn),
				QuotaSharePolicy: sdkQuotaPolicy(want.QuotaSharePolicy), FairsharePolicy: wantFair})
			return err
		})
	}
	p.tagChange("scheduling policy", pol.Name, arn, have.Tags, want.Tags)
	return nil
}

func policyKind(qp *record.QuotaSharePolicy, fp *types.FairsharePolicy) string {
	switch {
	case fp != nil:
		return fairKind(fp)
	case qp == nil:
		return "FIFO queue policy"
	}
	return "quota shares, idle capacity " + qp.IdleResourceAssignmentStrategy
}

// fairKind describes a fair-share policy in one line, so that a change of
// any of its values shows in the plan.
func fairKind(fp *types.FairsharePolicy) string {
	var ws []string
	for _, d := range fp.ShareDistribution {
		w := "1"
		if d.WeightFactor != nil {
			w = strconv.FormatFloat(float64(*d.WeightFactor), 'g', -1, 32)
		}
		ws = append(ws, aws.ToString(d.ShareIdentifier)+":"+w)
	}
	return fmt.Sprintf("fair share, decay %ds, reservation %d%%, weights [%s]",
		aws.ToInt32(fp.ShareDecaySeconds), aws.ToInt32(fp.ComputeReservation), strings.Join(ws, " "))
}

// sdkFairPolicy is a cluster file's fair-share policy as the API takes it.
func sdkFairPolicy(fp *clusterconfig.FairsharePolicy) *types.FairsharePolicy {
	if fp == nil {
		return nil
	}
	out := &types.FairsharePolicy{ShareDecaySeconds: aws.Int32(int32(fp.ShareDecaySeconds)), ComputeReservation: aws.Int32(int32(fp.ComputeReservation))}
	for _, d := range fp.ShareDistribution {
		sa := types.ShareAttributes{ShareIdentifier: aws.String(d.ShareIdentifier)}
		if d.WeightFactor != nil {
			sa.WeightFactor = aws.Float32(float32(*d.WeightFactor))
		}
		out.ShareDistribution = append(out.ShareDistribution, sa)
	}
	return out
}

func sdkQuotaPolicy(qp *record.QuotaSharePolicy) *types.QuotaSharePolicy {
	if qp == nil {
		return nil
	}
	return &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategy(qp.IdleResourceAssignmentStrategy)}
}

func (p *planner) env(se clusterconfig.ServiceEnvironment) error {
	want := clusterconfig.EnvInput(se)
	have, ok := p.cur.envs[se.Name]
	if !ok {
		p.add("create", "service environment", se.Name, []string{limitsText(want.CapacityLimits)}, func(ctx context.Context) error {
			_, err := p.c.batch.CreateServiceEnvironment(ctx, &batch.CreateServiceEnvironmentInput{
				ServiceEnvironmentName: aws.String(se.Name), ServiceEnvironmentType: types.ServiceEnvironmentType(want.Type),
				CapacityLimits: sdkEnvLimits(want.CapacityLimits), State: types.ServiceEnvironmentState(want.State), Tags: want.Tags,
			})
			return err
		})
		return nil
	}
	if string(have.ServiceEnvironmentType) != want.Type {
		return usagef("service environment %s is of type %s on the server; a type cannot change", se.Name, have.ServiceEnvironmentType)
	}
	var haveLimits []record.CapacityLimit
	for _, l := range have.CapacityLimits {
		haveLimits = append(haveLimits, record.CapacityLimit{CapacityUnit: aws.ToString(l.CapacityUnit), MaxCapacity: int(aws.ToInt32(l.MaxCapacity))})
	}
	var d diffs
	d.add("capacity", limitsText(haveLimits), limitsText(want.CapacityLimits))
	d.add("state", have.State, want.State)
	if len(d) > 0 {
		in := &batch.UpdateServiceEnvironmentInput{ServiceEnvironment: aws.String(se.Name)}
		if limitsText(haveLimits) != limitsText(want.CapacityLimits) {
			in.CapacityLimits = sdkEnvLimits(want.CapacityLimits)
		}
		if string(have.State) != want.State {
			in.State = types.ServiceEnvironmentState(want.State)
		}
		p.add("update", "service environment", se.Name, d, func(ctx context.Context) error {
			_, err := p.c.batch.UpdateServiceEnvironment(ctx, in)
			return err
		})
	}
	p.tagChange("service environment", se.Name, aws.ToString(have.ServiceEnvironmentArn), have.Tags, want.Tags)
	return nil
}

// limitsText renders capacity limits in unit order, so that two lists
// with the same limits compare equal.
func limitsText(ls []record.CapacityLimit) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s=%d", l.CapacityUnit, l.MaxCapacity))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func sdkEnvLimits(ls []record.CapacityLimit) []types.CapacityLimit {
	out := make([]types.CapacityLimit, len(ls))
	for i, l := range ls {
		out[i] = types.CapacityLimit{CapacityUnit: aws.String(l.CapacityUnit), MaxCapacity: aws.Int32(int32(l.MaxCapacity))}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
