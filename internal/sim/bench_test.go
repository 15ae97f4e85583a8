package sim_test

import (
	"testing"

	"github.com/sharq-dev/sharq/internal/sim"
)

// BenchmarkKueueBaseline replays the 15,000-job Kueue baseline.
func BenchmarkKueueBaseline(b *testing.B) {
	for b.Loop() {
		w, err := sim.Builtin("kueue-baseline", 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		r := mustRun(b, w, nil, sim.Options{})
		b.ReportMetric(r.Makespan, "makespan-s")
	}
}

// BenchmarkRandom replays a seeded random workload of 20,000 jobs of an
// hour on average, at 95 % of the capacity of 8 shares.
func BenchmarkRandom(b *testing.B) {
	for b.Loop() {
		w, err := sim.Builtin("random:jobs=20000,shares=8,load=0.95", 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		mustRun(b, w, nil, sim.Options{})
	}
}
