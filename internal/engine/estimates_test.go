package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/executortest"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// TestEstimatesFollowTheState: a running engine estimates each waiting
// job's start in the background, from the running jobs' max runtimes, and
// again when the state changes. QS3 (RESERVE) has one instance of its own.
func TestEstimatesFollowTheState(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	submit := func(name string, maxRuntime int) string {
		t.Helper()
		prio := 0
		j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", 1, maxRuntime),
			QuotaShareName: "QS3", SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	expect := func(id string, want forecast.Estimate) {
		t.Helper()
		var got forecast.Estimate
		testwait.True(t, 10*time.Second, "the estimate of "+id, func() bool {
			got, _ = h.e.LatestStartEstimate(id)
			return got == want
		})
	}
	a := submit("a", 600)
	aStart := h.waitStatus(a, engine.StatusRunning).StartedAt
	b := submit("b", 300)
	expect(b, forecast.Estimate{Kind: forecast.Start, At: aStart + 600_000, Basis: forecast.MaxRuntime})
	c := submit("c", 0)
	d := submit("d", 60)
	expect(c, forecast.Estimate{Kind: forecast.Start, At: aStart + 900_000, Basis: forecast.MaxRuntime})
	expect(d, forecast.Estimate{Kind: forecast.NoBasis})

	if err := h.e.TerminateServiceJob(context.Background(), a, "make room"); err != nil {
		t.Fatal(err)
	}
	bStart := h.waitStatus(b, engine.StatusRunning).StartedAt
	expect(c, forecast.Estimate{Kind: forecast.Start, At: bStart + 300_000, Basis: forecast.MaxRuntime})
	if _, ok := h.e.LatestStartEstimate("no-such-job"); ok {
		t.Error("an unknown job has an estimate")
	}
}

// TestEstimatesRefreshWhenAnEndIsOverdue: with nothing changing, the
// estimates are made again once the first end they expected has passed:
// a running job past its max runtime ends any moment now.
func TestEstimatesRefreshWhenAnEndIsOverdue(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)}
	h := startEngineWith(t, t.TempDir(), stripTimes, engine.Options{Clock: clock})
	h.setupWalkthrough()
	prio := 0
	var ids []string
	for _, name := range []string{"a", "b"} {
		j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", 1, 600),
			QuotaShareName: "QS3", SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	testwait.True(t, 10*time.Second, "a running", func() bool {
		j, err := h.e.DescribeServiceJob(context.Background(), ids[0])
		return err == nil && j.Status == engine.StatusRunning
	})
	t0 := clock.Now()
	testwait.True(t, 10*time.Second, "b's first estimate", func() bool {
		est, _ := h.e.LatestStartEstimate(ids[1])
		return est.Kind == forecast.Start && est.At == t0.Add(600*time.Second).UnixMilli()
	})
	clock.Add(time.Hour) // a runs on (the simulated executor counts real time)
	testwait.True(t, 10*time.Second, "b's estimate made again", func() bool {
		est, _ := h.e.LatestStartEstimate(ids[1])
		return est.Kind == forecast.Start && est.At == t0.Add(time.Hour).UnixMilli()
	})
}

// TestEstimatesRestWhileUnread: a running engine that nobody asks for
// estimates makes none; the first read makes them before it answers, and
// from then on the background keeps them fresh.
//
// It runs in a synctest bubble: the engine's goroutines and timers run on
// the bubble's clock, so "made none" is checked once every goroutine is
// idle, after more of the engine's time than a background computation
// would wait for.
func TestEstimatesRestWhileUnread(t *testing.T) {
	synctest.Test(t, testEstimatesRestWhileUnread)
}

func testEstimatesRestWhileUnread(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	prio := 0
	submit := func(name string) string {
		t.Helper()
		j, err := h.e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", 1, 600),
			QuotaShareName: "QS3", SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	a, b := submit("a"), submit("b")
	aStart := h.waitStatus(a, engine.StatusRunning).StartedAt
	time.Sleep(time.Second) // on the bubble's clock: ten times the least gap between background computations
	synctest.Wait()
	if r := engine.LatestEstimates(h.e); r != nil {
		t.Fatalf("estimates were made while nobody read them: %+v", r.Estimates)
	}
	want := forecast.Estimate{Kind: forecast.Start, At: aStart + 600_000, Basis: forecast.MaxRuntime}
	if got, _ := h.e.LatestStartEstimate(b); got != want {
		t.Fatalf("the first read gave %+v for b, want %+v", got, want)
	}
	c := submit("c")
	testwait.True(t, 10*time.Second, "c's estimate, made in the background", func() bool {
		r := engine.LatestEstimates(h.e)
		return r != nil && r.Estimates[c] == forecast.Estimate{Kind: forecast.Start, At: aStart + 1_200_000, Basis: forecast.MaxRuntime}
	})
}

// stripTimes passes an executor's updates on without their times, so that
// the engine stamps them with its own clock.
func stripTimes(ex executor.Executor) executor.Executor {
	return executortest.MapUpdates(ex, func(u executor.Update) executor.Update {
		u.At = time.Time{}
		return u
	})
}
