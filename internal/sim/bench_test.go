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
