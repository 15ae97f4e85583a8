package engine

import (
	"math"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

// TestFairUsageFromAttempts: usage recomputed from a job's attempts at
// load equals what the core adds up cycle by cycle while the job runs.
func TestFairUsageFromAttempts(t *testing.T) {
	t0 := time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	j := &record.Job{
		Status: StatusRunning, ShareIdentifier: "red", DispatchedAt: at(200).UnixNano(),
		Demand: []record.UnitCount{{Unit: "ml.g5.xlarge", Count: 2}},
		Attempts: []record.Attempt{
			{StartedAt: at(0).UnixMilli(), StoppedAt: at(100).UnixMilli()},
			{StartedAt: at(150).UnixMilli()}, // never reached RUNNING's stop: preempted while starting
			{StartedAt: at(230).UnixMilli()},
		},
	}
	// The second attempt has no stop: only the current one may, and it is
	// the third. Its span counts from dispatch (200 s) to now.
	const window = 3600.0
	var got float64
	for _, iv := range heldIntervals(j, at(300)) {
		got += fairContribution(2, at(300).Sub(iv[1]).Seconds(), iv[1].Sub(iv[0]).Seconds(), window)
	}
	want := core.Decay(0, 2, 100, window)
	want = core.Decay(want, 0, 100, window)
	want = core.Decay(want, 2, 100, window)
	if math.Abs(got-want) > 1e-9*want {
		t.Fatalf("usage from attempts = %v, cycle by cycle %v", got, want)
	}
}
