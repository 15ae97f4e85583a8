package sim_test

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/sim"
)

// Ensure the simulator honours a quota share's minimum runtime before
// preemption, read from the cluster file: a preemptor waits until its
// victim is old enough, and a cycle runs at that instant though nothing
// else happens then. With no minimum the same trace preempts at once.
func TestMinimumRuntime(t *testing.T) {
	const trace = `0,submit,low,QS1,1,ml.g5.xlarge,1,600
0,submit,med,QS1,2,ml.g5.xlarge,1,600
0,submit,qs3,QS3,1,ml.g5.xlarge,1,600
10,submit,qs2,QS2,1,ml.g5.xlarge,1,60
20,submit,high,QS1,9,ml.g5.xlarge,1,60`
	run := func(minimum time.Duration) []string {
		cfg := mustConfig(t, "../../examples/announcement.yaml")
		if minimum > 0 {
			cfg.SetMinimumRuntime(minimum)
		}
		w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader("at,event,job,share,priority,instance_type,instance_count,runtime\n"+trace)), "csv")
		if err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, w, cfg, sim.Options{Timeline: true})
		var got []string
		for _, e := range r.Timeline {
			if e.Event != "succeeded" {
				got = append(got, fmt.Sprintf("%gs %s %s %s: %s", e.At, e.Event, e.Job, e.Share, e.Detail))
			}
		}
		return got
	}
	// QS1 runs med on its own instance and low on QS2's; qs2 reclaims it at
	// 10s, then high (priority 9) preempts med in-share at 20s.
	want := []string{
		"0s dispatched med QS1: own", "0s dispatched qs3 QS3: own", "0s dispatched low QS1: borrowed",
		"10s preempted low QS1: Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job qs2)",
		"10s dispatched qs2 QS2: own, reclaim",
		"20s preempted med QS1: Preempted: in-share preemption (higher priority job high)", "20s dispatched high QS1: own, in-share",
	}
	if diff := cmp.Diff(want, run(0)[:len(want)]); diff != "" {
		t.Errorf("without a minimum (-want +got):\n%s", diff)
	}
	// With 45s both wait until low and med, dispatched at 0s, are 45s old:
	// no submission or end falls at 45s, yet both act then.
	want = []string{
		"0s dispatched med QS1: own", "0s dispatched qs3 QS3: own", "0s dispatched low QS1: borrowed",
		"45s preempted low QS1: Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job qs2)",
		"45s dispatched qs2 QS2: own, reclaim",
		"45s preempted med QS1: Preempted: in-share preemption (higher priority job high)", "45s dispatched high QS1: own, in-share",
		"105s dispatched med QS1: own", "105s dispatched low QS1: borrowed",
	}
	if diff := cmp.Diff(want, run(45*time.Second)); diff != "" {
		t.Errorf("with a minimum of 45s (-want +got):\n%s", diff)
	}
}
