package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// gatedExecutor is the simulated executor with calls the test controls:
// starts may fail or block, and stops may be held back.
type gatedExecutor struct {
	executor.Executor
	mu        sync.Mutex
	startErrs map[string][]error // by job name: what the next starts return
	starts    map[string]int     // by job name: start calls made
	gate      chan struct{}      // when not nil, a start waits for it
	holdStops bool
	heldStops []string
	graces    map[string]time.Duration // by attempt ID: the grace Stop was given
	started   chan string              // job names as their starts reach the executor
}

func newGated(ex executor.Executor) *gatedExecutor {
	return &gatedExecutor{Executor: ex, startErrs: map[string][]error{}, starts: map[string]int{}, started: make(chan string, 100),
		graces: map[string]time.Duration{}}
}

func (g *gatedExecutor) Start(ctx context.Context, a executor.Attempt) error {
	g.mu.Lock()
	g.starts[a.JobName]++
	gate := g.gate
	var err error
	if errs := g.startErrs[a.JobName]; len(errs) > 0 {
		err, g.startErrs[a.JobName] = errs[0], errs[1:]
	}
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if err != nil {
		return err
	}
	g.started <- a.JobName
	return g.Executor.Start(ctx, a)
}

func (g *gatedExecutor) Stop(ctx context.Context, id string, grace time.Duration) error {
	g.mu.Lock()
	g.graces[id] = grace
	if g.holdStops {
		g.heldStops = append(g.heldStops, id)
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return g.Executor.Stop(ctx, id, grace)
}

// releaseStops lets the held-back stops through: the victims then report
// that they stopped.
func (g *gatedExecutor) releaseStops(t *testing.T) {
	g.mu.Lock()
	ids := g.heldStops
	g.heldStops, g.holdStops = nil, false
	g.mu.Unlock()
	for _, id := range ids {
		if err := g.Executor.Stop(context.Background(), id, time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// Ensure executor calls are made off the engine's loop: while the
// executor is stuck starting an attempt, API writes are still answered.
func TestExecutorCallsOffTheLoop(t *testing.T) {
	var g *gatedExecutor
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor { g = newGated(ex); return g }, engine.Options{})
	h.setupWalkthrough()
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
	stuck := h.submit("stuck", "QS1", 1)
	h.waitStatus(stuck, "SCHEDULED")
	// The start is stuck in the executor; the engine still takes writes.
	for _, name := range []string{"a", "b", "c"} {
		h.submit(name, "QS3", 1)
	}
	if _, err := h.e.UpdateServiceJob(context.Background(), stuck, 5); err != nil {
		t.Fatal(err)
	}
	close(g.gate)
	h.waitStatus(stuck, "RUNNING")
}

// Ensure a start that fails with a transient error is tried again, and one
// that fails for good fails its attempt at once, with the reason.
func TestExecutorErrors(t *testing.T) {
	var g *gatedExecutor
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor { g = newGated(ex); return g },
		engine.Options{RetryBackoff: time.Millisecond})
	h.setupWalkthrough()
	transient := errors.New("connection refused")
	g.mu.Lock()
	g.startErrs["flaky"] = []error{transient, transient}
	g.startErrs["broken"] = []error{executor.Permanent(errors.New("no such image"))}
	g.mu.Unlock()

	flaky := h.submit("flaky", "QS1", 1)
	j := h.waitStatus(flaky, "RUNNING")
	g.mu.Lock()
	tries := g.starts["flaky"]
	g.mu.Unlock()
	if tries != 3 || len(j.Attempts) != 1 {
		t.Errorf("flaky: %d start calls and %d attempts, want 3 calls (two transient failures) for one attempt", tries, len(j.Attempts))
	}

	broken := h.submit("broken", "QS2", 1)
	j = h.waitStatus(broken, "FAILED")
	g.mu.Lock()
	tries = g.starts["broken"]
	g.mu.Unlock()
	if tries != 1 || !strings.HasPrefix(j.StatusReason, "CannotStart: no such image") {
		t.Errorf("broken: %d start calls, statusReason %q; want 1 call and CannotStart: no such image", tries, j.StatusReason)
	}
}

// Ensure a preemptor's attempt is started only once its victim has
// reported that it stopped, however long the victim takes.
func TestPreemptorWaitsForVictims(t *testing.T) {
	var g *gatedExecutor
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor { g = newGated(ex); return g }, engine.Options{})
	h.setupWalkthrough()
	low := h.submit("low", "QS1", 1)
	h.waitStatus(low, "RUNNING")
	<-g.started
	busy := h.submit("busy", "QS2", 1)
	h.waitStatus(busy, "RUNNING")
	<-g.started

	g.mu.Lock()
	g.holdStops = true
	g.mu.Unlock()
	high := h.submit("high", "QS1", 9) // preempts low in-share
	h.waitStatus(low, "RUNNABLE")
	h.waitStatus(high, "SCHEDULED")
	select {
	case name := <-g.started:
		t.Fatalf("job %s started while the victim had not reported stopping", name)
	case <-time.After(200 * time.Millisecond):
	}
	g.releaseStops(t)
	if name := <-g.started; name != "high" {
		t.Fatalf("started %s after the victim stopped, want high", name)
	}
	h.waitStatus(high, "RUNNING")
}

// Ensure a victim is stopped with its own grace period (its payload's
// SHARQ_STOP_GRACE_SECONDS), and that a preemptor waits for a victim that
// never reports for that grace period and the stop timeout, not the
// server's grace period.
func TestVictimGracePeriod(t *testing.T) {
	var g *gatedExecutor
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor { g = newGated(ex); return g },
		engine.Options{StopGrace: time.Hour, StopTimeout: 100 * time.Millisecond})
	h.setupWalkthrough()
	prio := 1
	low, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "low", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: "QS1", SchedulingPriority: &prio,
		ServiceRequestPayload: payload("ml.g5.xlarge", 1, map[string]string{"SHARQ_STOP_GRACE_SECONDS": "0.2"})})
	if err != nil {
		t.Fatal(err)
	}
	lowAttempt := h.waitStatus(low.JobID, "RUNNING").AttemptID
	<-g.started
	busy := h.submit("busy", "QS2", 1)
	h.waitStatus(busy, "RUNNING")
	<-g.started

	g.mu.Lock()
	g.holdStops = true // the victim never reports that it stopped
	g.mu.Unlock()
	began := time.Now()
	high := h.submit("high", "QS1", 9) // preempts low in-share
	select {
	case name := <-g.started:
		if name != "high" {
			t.Fatalf("started %s, want high", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("high did not start within 10s: it waits for the server's grace period, not its victim's")
	}
	waited := time.Since(began)
	g.mu.Lock()
	grace := g.graces[lowAttempt]
	g.mu.Unlock()
	if grace != 200*time.Millisecond {
		t.Errorf("the victim was stopped with %s of grace, want its own 200ms", grace)
	}
	if waited < 300*time.Millisecond {
		t.Errorf("high started %s after it was submitted, before its victim's grace and the stop timeout (300ms)", waited)
	}
	h.waitStatus(high, "RUNNING")
	g.releaseStops(t)
}

// Ensure that while a victim's processes get their grace period the records
// say so: the victim's attempt is stopping (since when, for how long), the
// preemptor says what it waits for; once the executor reports the victim
// gone, its attempt is stopped at that time and the preemptor starts.
func TestVictimStoppingIsTold(t *testing.T) {
	var g *gatedExecutor
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor { g = newGated(ex); return g },
		engine.Options{StopGrace: 40 * time.Second})
	h.setupWalkthrough()
	low := h.submit("low", "QS1", 1)
	h.waitStatus(low, "RUNNING")
	<-g.started
	busy := h.submit("busy", "QS2", 1)
	h.waitStatus(busy, "RUNNING")
	<-g.started

	g.mu.Lock()
	g.holdStops = true
	g.mu.Unlock()
	high := h.submit("high", "QS1", 9) // preempts low in-share
	victim := h.waitStatus(low, "RUNNABLE")
	stopping := time.Now().UnixMilli() // the victim's stopping began by now
	preemptor := h.waitStatus(high, "SCHEDULED")
	preemption := "Preempted: in-share preemption (higher priority job " + high + ")"
	a := victim.Attempts[0]
	if !strings.HasPrefix(a.StatusReason, preemption+"; stopping since ") || !strings.HasSuffix(a.StatusReason, ", up to 40s grace period") {
		t.Errorf("the stopping victim's attempt says %q", a.StatusReason)
	}
	if a.StoppedAt != 0 || victim.PreemptionSummary.RecentPreemptedAttempts[0].StoppedAt != 0 {
		t.Errorf("the stopping victim's attempt has stoppedAt %d (%d among recent preempted attempts) while its processes still run",
			a.StoppedAt, victim.PreemptionSummary.RecentPreemptedAttempts[0].StoppedAt)
	}
	if want := "waiting for the preempted job " + low + " in share QS1 to stop: up to 40s"; preemptor.StatusReason != want {
		t.Errorf("the preemptor says %q, want %q", preemptor.StatusReason, want)
	}

	// The processes go a while after their stop began: a stoppedAt taken
	// from the preemption would then read earlier than gone.
	testwait.True(t, time.Second, "the clock to pass the millisecond the victim was seen stopping",
		func() bool { return time.Now().UnixMilli() > stopping })
	gone := time.Now().UnixMilli()
	g.releaseStops(t)
	preemptor = h.waitStatus(high, "RUNNING")
	if preemptor.StatusReason != "" {
		t.Errorf("the running preemptor says %q", preemptor.StatusReason)
	}
	testwait.Until(t, 10*time.Second, func() error {
		j, err := h.e.DescribeServiceJob(context.Background(), low)
		if err != nil {
			t.Fatal(err)
		}
		a, r := j.Attempts[0], j.PreemptionSummary.RecentPreemptedAttempts[0]
		if a.StatusReason != preemption || r.StatusReason != preemption || a.StoppedAt < gone || r.StoppedAt != a.StoppedAt {
			return fmt.Errorf("the stopped victim's attempt says %q, stopped at %d, and %q, %d among recent preempted attempts; want %q, stopped at %d or later",
				a.StatusReason, a.StoppedAt, r.StatusReason, r.StoppedAt, preemption, gone)
		}
		return nil
	})
}

// Ensure a victim still stopping when the server goes down gets its end at
// the restart: here the executor of the new server has no trace of it (its
// processes went with the old one), so its attempt is stopped at the
// restart and says so no longer.
func TestVictimStoppingAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	var g *gatedExecutor
	h := startEngineWith(t, dir, func(ex executor.Executor) executor.Executor { g = newGated(ex); return g },
		engine.Options{StopGrace: 40 * time.Second})
	h.setupWalkthrough()
	low := h.submit("low", "QS1", 1)
	h.waitStatus(low, "RUNNING")
	busy := h.submit("busy", "QS2", 1)
	h.waitStatus(busy, "RUNNING")
	g.mu.Lock()
	g.holdStops = true
	g.mu.Unlock()
	h.submit("high", "QS1", 9)
	if a := h.waitStatus(low, "RUNNABLE").Attempts[0]; !a.Stopping() {
		t.Fatalf("the victim's attempt before the restart: %+v, want stopping", a)
	}
	h.stop()

	restarted := time.Now().UnixMilli()
	h = startEngineWith(t, dir, nil, engine.Options{StopGrace: 40 * time.Second})
	testwait.Until(t, 10*time.Second, func() error {
		j, err := h.e.DescribeServiceJob(context.Background(), low)
		if err != nil {
			t.Fatal(err)
		}
		a := j.Attempts[0]
		if a.Stopping() || a.StoppedAt < restarted || !strings.HasPrefix(a.StatusReason, "Preempted: ") ||
			strings.Contains(a.StatusReason, "stopping") {
			return fmt.Errorf("the victim's attempt after the restart: reason %q, stopped at %d; want stopped at %d or later",
				a.StatusReason, a.StoppedAt, restarted)
		}
		return nil
	})
}
