package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure the engine reports whose capacity running jobs hold, by ID or
// ARN, that the shares' usage splits borrowed and lent capacity the same
// way, and that a restart, which rebuilds the core from the store, reports
// the same.
func TestHoldings(t *testing.T) {
	dir := t.TempDir()
	h := startEngine(t, dir)
	h.setupWalkthrough()
	high := h.submit("qs1_job_high", "QS1", 3)
	med := h.submit("qs1_job_med", "QS1", 2)
	low := h.submit("qs1_job_low", "QS1", 1)
	h.waitStatus(high, dispatched...)
	h.waitStatus(med, dispatched...)
	h.waitStatus(low, "RUNNABLE")

	want := []core.Holding{
		{Job: high, Share: "QS1", Own: []core.UnitCount{{Unit: "ml.g5.xlarge", Count: 1}}},
		{Job: med, Share: "QS1", Loans: []core.Loan{{Unit: "ml.g5.xlarge", Count: 1, Lender: "QS2"}}},
	}
	check := func(e *engine.Engine) {
		t.Helper()
		got := e.HoldingsOf([]string{high, "arn:aws:batch:us-east-1:000000000000:service-job/" + med, low, "nope"})
		if diff := cmp.Diff(map[string]core.Holding{high: want[0], med: want[1]}, got); diff != "" {
			t.Errorf("holdings (-want +got):\n%s", diff)
		}
	}
	check(h.e)
	lent := map[string][]core.ShareCount{}
	for _, s := range h.e.Shares() {
		for _, u := range s.Units {
			lent[s.Share+" borrowed from"] = u.BorrowedFrom
			lent[s.Share+" lent to"] = u.LentTo
		}
	}
	if diff := cmp.Diff(map[string][]core.ShareCount{
		"QS1 borrowed from": {{Share: "QS2", Count: 1}}, "QS1 lent to": nil,
		"QS2 borrowed from": nil, "QS2 lent to": {{Share: "QS1", Count: 1}},
		"QS3 borrowed from": nil, "QS3 lent to": nil,
	}, lent); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}

	h.stop()
	h2 := startEngine(t, dir)
	h2.waitStatus(med, dispatched...)
	check(h2.e)

	// QS2's own job reclaims: med goes back to waiting, and its reason says
	// why QS3's idle instance is no use to it.
	// (Right after its preemption it is held back until the next instant.)
	qs2 := h2.submit("qs2_job_1", "QS2", 1)
	h2.waitStatus(qs2, dispatched...)
	want2 := "QS1 at its limit of 1 ml.g5.xlarge and nothing lendable: QS3's idle instance is RESERVE"
	testwait.Until(t, 10*time.Second, func() error {
		if m := h2.waitStatus(med, "RUNNABLE"); m.StatusReason != want2 {
			return fmt.Errorf("med waits with %q, want %q", m.StatusReason, want2)
		}
		return nil
	})
	if _, ok := h2.e.HoldingsOf([]string{med})[med]; ok {
		t.Error("a preempted job still has a holding")
	}
}
