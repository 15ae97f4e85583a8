package sim_test

import (
	"bufio"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/sim"
)

// Ensure what happens at one virtual instant is one batch and one cycle
// (scheduling.md 2.3), on the announcement's set-up: QS1 lends and borrows
// with in-share preemption, QS2 lends, QS3 reserves; one instance each.
func TestOneCyclePerInstant(t *testing.T) {
	cfg := mustConfig(t, "../../examples/announcement.yaml")
	for _, tc := range []struct {
		name, trace string
		want        []string
	}{{
		name: "a job submitted and cancelled at one instant never runs",
		trace: `0,submit,gone,QS1,1,ml.g5.xlarge,1,60
0,cancel,gone,,,,,`,
		want: []string{"0s cancelled gone QS1: Cancelled by the trace"},
	}, {
		name: "an attempt ending as a higher-priority job arrives finishes, and the newcomer takes its place",
		trace: `0,submit,run,QS1,1,ml.g5.xlarge,1,10
0,submit,qs2,QS2,1,ml.g5.xlarge,1,60
10,submit,hi,QS1,9,ml.g5.xlarge,1,5`,
		want: []string{
			"0s dispatched qs2 QS2: own", "0s dispatched run QS1: own", // at one instant, in job ID order
			"10s succeeded run QS1: Training job completed", "10s dispatched hi QS1: own",
			"15s succeeded hi QS1: Training job completed", "60s succeeded qs2 QS2: Training job completed",
		},
	}, {
		// Applied one after the other, top (8) would preempt low, then mid
		// (raised to 9) would preempt top.
		name: "a priority raise and a submission at one instant are weighed together",
		trace: `0,submit,low,QS1,1,ml.g5.xlarge,1,30
0,submit,qs2,QS2,1,ml.g5.xlarge,1,60
1,submit,mid,QS1,0,ml.g5.xlarge,1,30
5,priority,mid,,9,,,
5,submit,top,QS1,8,ml.g5.xlarge,1,30`,
		want: []string{
			"0s dispatched low QS1: own", "0s dispatched qs2 QS2: own",
			"5s preempted low QS1: Preempted: in-share preemption (higher priority job mid)", "5s dispatched mid QS1: own, in-share",
			"35s succeeded mid QS1: Training job completed", "35s dispatched top QS1: own",
			"60s succeeded qs2 QS2: Training job completed", "60s dispatched low QS1: borrowed",
			"65s succeeded top QS1: Training job completed", "90s succeeded low QS1: Training job completed",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader("at,event,job,share,priority,instance_type,instance_count,runtime\n"+tc.trace)), "csv")
			if err != nil {
				t.Fatal(err)
			}
			r := mustRun(t, w, cfg, sim.Options{Timeline: true})
			var got []string
			for _, e := range r.Timeline {
				got = append(got, fmt.Sprintf("%gs %s %s %s: %s", e.At, e.Event, e.Job, e.Share, e.Detail))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
		})
	}
}
