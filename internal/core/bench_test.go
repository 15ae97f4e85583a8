package core_test

import (
	"fmt"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

var benchT0 = time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)

// bigCore builds the speed benchmarks' world: 10 capacity units, each the
// pool of one service environment and queue with 100 quota shares (1,000
// shares), every share limited to 10 instances and lending and borrowing;
// jobs queued spread evenly over the shares. It returns the IDs of the
// dispatched jobs after a first cycle filled the capacity.
func bigCore(tb testing.TB, jobs int) (*core.Core, []string) {
	tb.Helper()
	// The benchmark framework calls a benchmark several times; build each
	// benchmark's world once and let later runs go on from where it is.
	if w, ok := worlds[tb.Name()]; ok && w.jobs == jobs {
		return w.c, w.running
	}
	c, running := buildBigCore(tb, jobs)
	worlds[tb.Name()] = bigWorld{c: c, running: running, jobs: jobs}
	return c, running
}

type bigWorld struct {
	c       *core.Core
	running []string
	jobs    int
}

var (
	worlds  = map[string]bigWorld{}
	newJobs int // IDs of jobs submitted by benchmarks, unique across runs
)

func buildBigCore(tb testing.TB, jobs int) (*core.Core, []string) {
	c := core.New()
	const units, sharesPerUnit, limit = 10, 100, 10
	for u := range units {
		unit := fmt.Sprintf("ml.u%d.xlarge", u)
		q := "q" + strconv.Itoa(u)
		mustApply(tb, c, core.PutEnv{Name: "se" + strconv.Itoa(u), Limits: []core.UnitCount{{Unit: unit, Count: sharesPerUnit * limit}}})
		mustApply(tb, c, core.PutQueue{Name: q, Env: "se" + strconv.Itoa(u), QuotaShares: true})
		for s := range sharesPerUnit {
			mustApply(tb, c, core.PutShare{Queue: q, Name: "s" + strconv.Itoa(s), Limits: []core.UnitCount{{Unit: unit, Count: limit}},
				Strategy: core.LendAndBorrow, BorrowLimit: core.UnlimitedBorrow, InSharePreemption: true})
		}
	}
	for i := range jobs {
		u, s := i%units, (i/units)%sharesPerUnit
		mustApply(tb, c, core.Submit{Job: "j" + strconv.Itoa(i), Queue: "q" + strconv.Itoa(u), Share: "s" + strconv.Itoa(s),
			Demand: []core.UnitCount{{Unit: fmt.Sprintf("ml.u%d.xlarge", u), Count: 1}}, Priority: i % 7, QueuedAt: int64(i), PreemptionRetries: -1})
	}
	var running []string
	for _, d := range c.Step(benchT0).List {
		if d.Kind == core.Dispatch {
			running = append(running, d.Job)
		}
	}
	return c, running
}

func mustApply(tb testing.TB, c *core.Core, ev core.Event) {
	tb.Helper()
	if err := c.Apply(ev); err != nil {
		tb.Fatal(err)
	}
}

// cpuTime is the CPU time this process has used. On a shared, loaded
// machine it measures the work done better than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per op since start to the benchmark's output.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDispatchAsCapacityFrees ends one running job and steps, which
// dispatches the next job into the freed instance: one op is one dispatch
// decision, with 1,000,000 jobs queued.
func BenchmarkDispatchAsCapacityFrees(b *testing.B) { benchDispatch(b, 1) }

// BenchmarkDispatchBulk frees 1,000 instances at once and steps: one op is
// one step that makes 1,000 dispatch decisions.
func BenchmarkDispatchBulk(b *testing.B) { benchDispatch(b, 1000) }

// benchDispatch ends n running jobs and steps, per op; the jobs the step
// dispatches take the ended jobs' places in running.
func benchDispatch(b *testing.B, n int) {
	c, running := bigCore(b, 1_000_000)
	now := benchT0
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	dispatches := 0
	for i := 0; i < b.N; i++ {
		start := (i * n) % len(running)
		for k := start; k < start+n; k++ {
			mustApply(b, c, core.AttemptEnded{Job: running[k]})
		}
		now = now.Add(time.Millisecond)
		k := start
		for _, d := range c.Step(now).List {
			if d.Kind == core.Dispatch {
				running[k] = d.Job
				k++
				dispatches++
			}
		}
	}
	b.ReportMetric(float64(dispatches)/b.Elapsed().Seconds(), "dispatches/s")
}

// BenchmarkSubmitStep submits a job that queues behind others and steps,
// with 1,000,000 jobs queued and the capacity full: nothing is dispatched.
func BenchmarkSubmitStep(b *testing.B) {
	c, _ := bigCore(b, 1_000_000)
	now := benchT0
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		u, s := i%10, (i/10)%100
		newJobs++
		mustApply(b, c, core.Submit{Job: "n" + strconv.Itoa(newJobs), Queue: "q" + strconv.Itoa(u), Share: "s" + strconv.Itoa(s),
			Demand: []core.UnitCount{{Unit: "ml.u" + strconv.Itoa(u) + ".xlarge", Count: 1}}, QueuedAt: int64(2_000_000 + i), PreemptionRetries: -1})
		now = now.Add(time.Microsecond)
		if ds := c.Step(now); len(ds.List) > 0 && ds.List[0].Kind == core.Dispatch {
			b.Fatalf("unexpected dispatch %v", ds.List[0])
		}
	}
}

// BenchmarkMemoryPerQueuedJob reports the core's heap bytes per queued job
// with 1,000,000 jobs queued (job IDs included).
func BenchmarkMemoryPerQueuedJob(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, _ := buildBigCore(b, 1_000_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(c.Len()), "bytes/job")
		runtime.KeepAlive(c)
	}
}
