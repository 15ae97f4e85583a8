package sim_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/sim"
)

// TestFairShareWeights replays two identifiers that each queue more than
// the capacity at once on examples/fair-share.yaml: research (weight
// 0.125) gets about eight instances for team-a's one, so its jobs wait far
// less (45 minutes on average against over two hours).
func TestFairShareWeights(t *testing.T) {
	w := &sim.Workload{Name: "fair"}
	for i := range 80 {
		for _, share := range []string{"team-a", "research"} {
			w.Jobs = append(w.Jobs, sim.Job{ID: fmt.Sprintf("%s-%02d", share, i), Class: share, Queue: "fair-jq", Share: share,
				InstanceType: "ml.g5.xlarge", Count: 1, Runtime: 10 * time.Minute})
		}
	}
	r := mustRun(t, w, mustConfig(t, "../../examples/fair-share.yaml"), sim.Options{})
	if r.Jobs.Succeeded != 160 {
		t.Fatalf("%d of 160 jobs succeeded", r.Jobs.Succeeded)
	}
	mean := map[string]float64{}
	for _, g := range r.Waits.ByClass {
		mean[g.Group] = g.Mean
	}
	if !(mean["research"] > 0 && mean["research"]*2 < mean["team-a"]) {
		t.Errorf("mean waits: research %.0f s, team-a %.0f s; research should wait far less", mean["research"], mean["team-a"])
	}

	// The report tells each identifier's use: 80 jobs of 10 minutes each.
	var got []string
	for _, p := range r.Pools {
		for _, sh := range p.Shares {
			got = append(got, fmt.Sprintf("%s/%s %s %.2f h", p.Queue, sh.Share, sh.Strategy, sh.OwnHours))
		}
	}
	if want := []string{"fair-jq/research FAIR_SHARE 13.33 h", "fair-jq/team-a FAIR_SHARE 13.33 h"}; !slices.Equal(got, want) {
		t.Errorf("pool shares %q, want %q", got, want)
	}

	w.Jobs = append(w.Jobs, sim.Job{ID: "nameless", Queue: "fair-jq", InstanceType: "ml.g5.xlarge", Count: 1, Runtime: time.Minute})
	if _, err := sim.New(t.Context(), w, mustConfig(t, "../../examples/fair-share.yaml"), sim.Options{}); err == nil {
		t.Error("a job without a share identifier on a fair-share queue was accepted")
	}
}
