package engine_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// The estimate benchmarks' world: one service environment of
// estInstances instances shared by estShares LEND_AND_BORROW quota shares
// with in-share preemption; every instance runs a job and estQueued jobs
// of 1 instance wait, spread over the shares with priorities 0-3, each
// declaring a max runtime of 5 to 30 minutes. The forward run has more to
// do than its bounds allow: the queue takes about 29 hours to drain.
const estInstances, estShares, estQueued = 1000, 100, 100_000

// BenchmarkStartEstimates: one computation of every waiting job's start
// (the copy of the core and the jobs under the lock, their run times, the
// forward run), with estQueued jobs waiting.
func BenchmarkStartEstimates(b *testing.B) {
	e := estimateWorld(b)
	var res interface{ String() string }
	decisions := 0
	cpu := cpuTime()
	for b.Loop() {
		r, err := e.ComputeStartEstimates()
		if err != nil {
			b.Fatal(err)
		}
		res, decisions = r.Stop, r.Decisions
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(decisions), "decisions/op")
	b.Logf("%d jobs waiting; the run stopped: %s", estQueued, res)
}

// BenchmarkStartEstimatesCopy: the part of a computation that holds the
// engine's lock (the scheduling cycles wait meanwhile): the copy of the
// core, without its index of jobs by ID, and the dispatched jobs' times.
func BenchmarkStartEstimatesCopy(b *testing.B) {
	e := estimateWorld(b)
	cpu := cpuTime()
	for b.Loop() {
		engine.CopyForEstimates(e)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time this process has used: on a shared machine it
// measures the work done better than the wall clock does. It counts the
// garbage collector's work on other cores too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var estWorld *engine.Engine

// estimateWorld builds the world once per benchmark binary: a driven
// engine with a sink, on an in-memory store, every job submitted through ApplyInstant.
func estimateWorld(b testing.TB) *engine.Engine {
	b.Helper()
	if estWorld != nil {
		return estWorld
	}
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)}
	e, err := engine.New(ctx, engine.Options{Store: memstore.New(), Executor: idleExecutor{},
		Driver: &engine.Driver{Clock: clock, Sink: &transitionLog{}}, MaxSharesPerQueue: estShares})
	if err != nil {
		b.Fatal(err)
	}
	must := func(_ any, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	p, err := e.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "p",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	must(p, err)
	must(e.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: estInstances}}}))
	must(e.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "q", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se"}}, SchedulingPolicyArn: p.Arn}))
	for s := range estShares {
		must(e.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{Name: fmt.Sprintf("s%02d", s), JobQueue: "q",
			CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: estInstances / estShares}},
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: ptr(100)},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"}}))
	}
	const batch = 5000
	for first := 0; first < estInstances+estQueued; first += batch {
		var in engine.Instant
		for i := first; i < min(first+batch, estInstances+estQueued); i++ {
			prio := i % 4
			in.Submits = append(in.Submits, engine.SubmitServiceJobInput{JobName: fmt.Sprintf("j%d", i), JobQueue: "q",
				ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: fmt.Sprintf("s%02d", i%estShares), SchedulingPriority: &prio,
				ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", 1, 300+i*7919%1500)})
			in.IDs = append(in.IDs, fmt.Sprintf("job-%07d", i))
		}
		res, err := e.ApplyInstant(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range res.SubmitErrs {
			if err != nil {
				b.Fatal(err)
			}
		}
		clock.Add(time.Second)
	}
	if n := e.StatusCounts()[engine.StatusRunnable]; n != estQueued {
		b.Fatalf("%d jobs waiting, want %d", n, estQueued)
	}
	// A first computation reads the payloads, as a server's first does.
	if _, err := e.ComputeStartEstimates(); err != nil {
		b.Fatal(err)
	}
	estWorld = e
	return e
}

// idleExecutor starts nothing and reports nothing: the jobs it is given
// stay SCHEDULED.
type idleExecutor struct{}

func (idleExecutor) Start(context.Context, executor.Attempt) error       { return nil }
func (idleExecutor) Stop(context.Context, string, time.Duration) error   { return nil }
func (idleExecutor) Updates() <-chan executor.Update                     { return nil }
func (idleExecutor) Attempts(context.Context) ([]executor.Update, error) { return nil, nil }
func (idleExecutor) Close() error                                        { return nil }
