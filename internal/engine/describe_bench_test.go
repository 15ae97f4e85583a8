package engine_test

import (
	"context"
	"testing"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// BenchmarkDescribeKept describes jobs kept for describes without the
// engine's lock: one dispatched, one waiting behind it (whose reason comes
// from its share's head). unlocked/op is the share of describes served
// without the lock: 1 unless a cycle dropped a job meanwhile.
func BenchmarkDescribeKept(b *testing.B) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{Store: memstore.New()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	p, err := e.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "p",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "jq", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se"}}, SchedulingPolicyArn: p.Arn}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{Name: "qs", JobQueue: "jq",
		CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
		ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "RESERVE"},
		PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}}); err != nil {
		b.Fatal(err)
	}
	submit := func() string {
		j, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "j", JobQueue: "jq", ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "qs"})
		if err != nil {
			b.Fatal(err)
		}
		return j.JobID
	}
	ids := []string{submit(), submit()}
	describe := func(id string) {
		if _, err := e.DescribeServiceJob(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range ids {
		describe(id) // asks the next cycle for the shares' heads
	}
	submit() // a cycle, which publishes them
	for _, id := range ids {
		describe(id) // keeps the job
	}
	before := e.ReadWaits().Unlocked
	for _, id := range ids {
		describe(id)
	}
	if n := e.ReadWaits().Unlocked - before; n != 2 {
		b.Fatalf("%d of 2 describes served without the lock", n)
	}
	before = e.ReadWaits().Unlocked
	b.ReportAllocs()
	b.ResetTimer()
	n := int64(0)
	for ; b.Loop(); n++ {
		if _, err := e.DescribeServiceJob(ctx, ids[n&1]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(e.ReadWaits().Unlocked-before)/float64(n), "unlocked/op")
}
