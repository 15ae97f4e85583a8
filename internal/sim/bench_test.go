package sim_test

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sharq-dev/sharq/internal/sim"
)

// benchBuiltin replays a built-in workload and reports its makespan in
// virtual seconds and the simulation's cost per job.
func benchBuiltin(b *testing.B, spec string) {
	w, err := sim.Builtin(spec, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w, _ = sim.Builtin(spec, 1, nil)
		r := mustRun(b, w, nil, sim.Options{})
		b.ReportMetric(r.Makespan, "makespan-s")
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(w.Jobs)), "µs/job")
}

// BenchmarkKueueBaseline replays the 15,000-job Kueue baseline
// (shared/bench/kueue-baseline.md).
func BenchmarkKueueBaseline(b *testing.B) { benchBuiltin(b, "kueue-baseline") }

// BenchmarkKueueLarge replays the 50,000-job, 1,000-share Kueue large-scale
// workload.
func BenchmarkKueueLarge(b *testing.B) { benchBuiltin(b, "kueue-large") }

// BenchmarkRandom replays a seeded random workload of 20,000 jobs of an
// hour on average, at 95 % of the capacity of 8 shares.
func BenchmarkRandom(b *testing.B) { benchBuiltin(b, "random:jobs=20000,shares=8,load=0.95") }

// BenchmarkMillionJobTrace writes a 1,000,000-job random trace as CSV,
// then reads and replays it; it reports the memory the runtime took, in
// MiB. The offered load is 70 %: on this cluster a third of the shares are
// RESERVE, whose idle capacity nobody else may use, and preempted jobs
// restart, so at 95 % the queue grows without bound over the trace's years
// of virtual time.
// Run it alone: go test -run X -bench MillionJobTrace -benchtime 1x.
func BenchmarkMillionJobTrace(b *testing.B) {
	w, err := sim.Builtin("random:jobs=1000000,shares=8,load=0.7", 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := w.Config
	path := filepath.Join(b.TempDir(), "trace.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := sim.WriteCSV(bw, w); err != nil {
		b.Fatal(err)
	}
	bw.Flush()
	f.Close()
	w = nil
	for b.Loop() {
		tw, err := sim.ReadTraceFile(path)
		if err != nil {
			b.Fatal(err)
		}
		mustRun(b, tw, cfg, sim.Options{})
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
}
