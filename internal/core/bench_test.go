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

// The speed benchmarks' world: bigUnits capacity units, each the pool of
// one service environment and queue with bigShares quota shares, every
// share limited to bigShareLimit instances and lending and borrowing.
const bigUnits, bigShares, bigShareLimit = 10, 100, 10

// bigWorld is a benchmark's world after a first cycle filled the capacity.
type bigWorld struct {
	c       *core.Core
	running []ran // the dispatched jobs
	next    int   // where in running benchDispatch ends jobs next
	queued  int   // the jobs waiting
	jobs    int   // the jobs it was built with
}

// bigCore returns the benchmark's world with jobs queued spread evenly over
// the shares. The benchmark framework calls a benchmark several times: the
// world is built once per benchmark and later runs go on from where it is.
func bigCore(tb testing.TB, jobs int) *bigWorld {
	tb.Helper()
	if w, ok := worlds[tb.Name()]; ok && w.jobs == jobs {
		return w
	}
	c, running := buildBigCore(tb, jobs)
	w := &bigWorld{c: c, running: running, queued: jobs - len(running), jobs: jobs}
	worlds[tb.Name()] = w
	return w
}

// ran is a dispatched job as a caller of the core keeps it.
type ran struct {
	id     string
	handle core.Handle
}

var (
	worlds  = map[string]*bigWorld{}
	newJobs int // IDs of jobs submitted by benchmarks, unique across runs
)

// buildBigCore builds a new world (see bigUnits) with jobs queued spread
// evenly over the shares, steps once and returns the dispatched jobs.
func buildBigCore(tb testing.TB, jobs int) (*core.Core, []ran) {
	c := core.New()
	for u := range bigUnits {
		unit := fmt.Sprintf("ml.u%d.xlarge", u)
		q := "q" + strconv.Itoa(u)
		mustApply(tb, c, core.PutEnv{Name: "se" + strconv.Itoa(u), Limits: []core.UnitCount{{Unit: unit, Count: bigShares * bigShareLimit}}})
		mustApply(tb, c, core.PutQueue{Name: q, Env: "se" + strconv.Itoa(u), QuotaShares: true})
		for s := range bigShares {
			mustApply(tb, c, core.PutShare{Queue: q, Name: "s" + strconv.Itoa(s), Limits: []core.UnitCount{{Unit: unit, Count: bigShareLimit}},
				Strategy: core.LendAndBorrow, BorrowLimit: core.UnlimitedBorrow, InSharePreemption: true})
		}
	}
	for i := range jobs {
		u, s := i%bigUnits, (i/bigUnits)%bigShares
		mustApply(tb, c, core.Submit{Job: "j" + strconv.Itoa(i), Queue: "q" + strconv.Itoa(u), Share: "s" + strconv.Itoa(s),
			Demand: []core.UnitCount{{Unit: fmt.Sprintf("ml.u%d.xlarge", u), Count: 1}}, Priority: i % 7, QueuedAt: int64(i), PreemptionRetries: -1})
	}
	var running []ran
	for _, d := range c.Step(benchT0).List {
		if d.Kind == core.Dispatch {
			running = append(running, ran{d.Job, d.Handle})
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

// applyFast is mustApply for timed loops: it does not mark itself a
// helper, which costs a stack walk per call.
func applyFast(b *testing.B, c *core.Core, ev core.Event) {
	if err := c.Apply(ev); err != nil {
		b.Fatal(err)
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
// dispatches take the ended jobs' places in running. A world too close to
// running dry is built anew, outside the timer, so that any -count and
// -benchtime measure the same thing.
func benchDispatch(b *testing.B, n int) {
	w := bigCore(b, 1_000_000)
	now := benchT0
	var rebuilding time.Duration // CPU time spent building worlds anew
	b.ResetTimer()
	defer func(start time.Duration) { reportCPU(b, start+rebuilding) }(cpuTime())
	dispatches := 0
	for i := 0; i < b.N; i++ {
		if !w.canRefill(n) {
			b.StopTimer()
			t := cpuTime()
			delete(worlds, b.Name()) // NB: the spent world can be collected while the next is built
			w = bigCore(b, 1_000_000)
			runtime.GC()
			rebuilding += cpuTime() - t
			b.StartTimer()
		}
		start := w.next
		w.next = (start + n) % len(w.running)
		for k := start; k < start+n; k++ {
			applyFast(b, w.c, core.AttemptEnded{Job: w.running[k].id, Handle: w.running[k].handle})
		}
		now = now.Add(time.Millisecond)
		k := start
		for _, d := range w.c.Step(now).List {
			if d.Kind == core.Dispatch {
				if k < start+n {
					w.running[k] = ran{d.Job, d.Handle}
				}
				k++
			}
		}
		if k != start+n {
			b.Fatalf("op %d: ended %d jobs, the step dispatched %d", i, n, k-start)
		}
		dispatches += n
		w.queued -= n
	}
	b.ReportMetric(float64(dispatches)/b.Elapsed().Seconds(), "dispatches/s")
}

// canRefill tells whether, after any n running jobs end, the next step
// finds a queued job for each freed instance. NB: a job is only dispatched
// into its own unit, and each pass of benchDispatch over running (which
// goes on from run to run) ends every unit's bigShares×bigShareLimit
// running jobs once, so the unit queues drain evenly, to within that many
// jobs of one another.
func (w *bigWorld) canRefill(n int) bool {
	return w.queued >= bigUnits*(n+bigShares*bigShareLimit)
}

// BenchmarkSubmitStep submits a job that queues behind others and steps,
// with 1,000,000 jobs queued and the capacity full: nothing is dispatched.
func BenchmarkSubmitStep(b *testing.B) {
	w := bigCore(b, 1_000_000)
	c := w.c
	now := benchT0
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		u, s := i%bigUnits, (i/bigUnits)%bigShares
		newJobs++
		w.queued++
		applyFast(b, c, core.Submit{Job: "n" + strconv.Itoa(newJobs), Queue: "q" + strconv.Itoa(u), Share: "s" + strconv.Itoa(s),
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
