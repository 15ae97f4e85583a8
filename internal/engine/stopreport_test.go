package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// killingExecutor is the simulated executor whose stopped attempts report
// that their processes ignored SIGTERM and were killed.
type killingExecutor struct {
	*simulated.Executor
	out chan executor.Update
}

const killedReason = "Stopped: killed with SIGKILL after 2s grace period"

func newKillingExecutor() *killingExecutor {
	x := &killingExecutor{Executor: simulated.New(), out: make(chan executor.Update, 64)}
	go func() {
		defer close(x.out)
		for u := range x.Executor.Updates() {
			if u.State == executor.Stopped {
				u.Reason = killedReason
			}
			x.out <- u
		}
	}()
	return x
}

func (x *killingExecutor) Updates() <-chan executor.Update { return x.out }

// A preempted attempt whose processes had to be killed after the grace
// period says so in its record, among the job's attempts and its recent
// preempted attempts.
func TestPreemptedAttemptKilledAfterGrace(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ex := newKillingExecutor()
	e, err := engine.New(context.Background(), engine.Options{Store: st, Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	h := &harness{t: t, e: e, dir: dir}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine run: %v", err)
		}
		ex.Close()
		st.Close()
	})
	h.setupWalkthrough()
	med := h.submit("med", "QS1", 2)
	h.submit("high", "QS1", 3)
	h.waitStatus(med, dispatched...)
	qs2 := h.submit("qs2", "QS2", 1)
	h.waitStatus(med, "RUNNABLE")

	want := "Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job " + qs2 + "); killed with SIGKILL after 2s grace period"
	testwait.Until(t, 10*time.Second, func() error {
		j, err := e.DescribeServiceJob(context.Background(), med)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{j.Attempts[0].StatusReason, j.PreemptionSummary.RecentPreemptedAttempts[0].StatusReason}
		if got[0] != want || got[1] != want {
			return fmt.Errorf("med's preempted attempt says %q among its attempts and %q among recent preempted attempts, want %q in both",
				got[0], got[1], want)
		}
		return nil
	})
}
