package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/sim"
)

func mustConfig(t testing.TB, path string) *clusterconfig.Config {
	t.Helper()
	c, err := clusterconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRun(t testing.TB, w *sim.Workload, cfg *clusterconfig.Config, opts sim.Options) *sim.Report {
	t.Helper()
	s, err := sim.New(context.Background(), w, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Ensure the announcement's set-up replays the walkthrough as the spec
// tells it: high runs on QS1's own instance and med borrows QS2's (step 1);
// QS2's job reclaims it (step 2); low, raised to 4, preempts high in-share
// (step 3); when QS2's job ends its instance is lent to QS1's head, high.
func TestWalkthrough(t *testing.T) {
	w, err := sim.ReadTraceFile("../../examples/walkthrough.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, w, mustConfig(t, "../../examples/announcement.yaml"), sim.Options{Timeline: true})
	var got []string
	for _, e := range r.Timeline {
		got = append(got, e.String())
	}
	want := []string{
		"        0s  dispatched qs1_job_high QS1: own",
		"        1s  dispatched qs1_job_med QS1: borrowed",
		"       10s  preempted  qs1_job_med QS1: Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job qs2_job_1)",
		"       10s  dispatched qs2_job_1 QS2: own, reclaim",
		"       20s  preempted  qs1_job_high QS1: Preempted: in-share preemption (higher priority job qs1_job_low)",
		"       20s  dispatched qs1_job_low QS1: own, in-share",
		"      5.2m  succeeded  qs2_job_1 QS2: Training job completed",
		"      5.2m  dispatched qs1_job_high QS1: borrowed",
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("timeline (-want +got):\n%s\nfull:\n%s", diff, strings.Join(got, "\n"))
	}
	if r.Preemptions.CrossShare != 1 || r.Preemptions.InShare != 1 || r.Jobs.Succeeded != 4 {
		t.Errorf("preemptions %+v, jobs %+v; want 1 cross-share, 1 in-share, 4 succeeded", r.Preemptions, r.Jobs)
	}
}
