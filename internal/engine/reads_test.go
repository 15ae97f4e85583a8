package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
)

var readsSeed = flag.Uint64("reads-seed", 0, "replay one random run of TestDescribeWithoutLock")

// TestDescribeWithoutLock compares the describes served without the
// engine's lock with those made under it, for every job after every step
// of random runs: submissions to the three shares at random priorities and
// sizes, priority changes, terminations, the executor's reports, capacity
// changes that make jobs infeasible and feasible again, disabled queues,
// the clock moving on, and restarts; every other run keeps at most five
// jobs.
func TestDescribeWithoutLock(t *testing.T) {
	seed := *readsSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -reads-seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	ctx := context.Background()
	var unlocked int64
	for run := range 4 {
		w := newWorld(t)
		(&harness{t: t, e: w.e}).setupWalkthrough()
		limit := int64(engine.KeptReads)
		if run%2 == 1 {
			limit = 5 // kept jobs are dropped all at once when there are this many
		}
		engine.KeepReads(w.e, limit)
		var ids []string
		for step := range 250 {
			if len(ids) == 0 || rng.IntN(3) == 0 {
				prio := rng.IntN(4)
				j, err := w.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "j", JobQueue: scenarioQueue,
					ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1+rng.IntN(3), nil),
					QuotaShareName: []string{"QS1", "QS2", "QS3"}[rng.IntN(3)], SchedulingPriority: &prio})
				if err == nil { // a DISABLED queue takes none
					ids = append(ids, j.JobID)
				}
			} else {
				id := ids[rng.IntN(len(ids))]
				switch rng.IntN(9) {
				case 0:
					w.e.UpdateServiceJob(ctx, id, rng.IntN(4))
				case 1:
					w.e.TerminateServiceJob(ctx, id, "terminated by the test")
				case 2, 3, 4:
					if a, ok := w.ex.attemptOf(id); ok {
						state := []executor.State{executor.Running, executor.Succeeded, executor.Failed}[rng.IntN(3)]
						if state.Terminal() {
							delete(w.ex.live, a.ID)
						}
						w.e.Deliver(ctx, executor.Update{AttemptID: a.ID, JobID: id, State: state, Reason: "by the test"})
					}
				case 5:
					w.e.UpdateServiceEnvironment(ctx, batchmodel.UpdateServiceEnvironmentInput{ServiceEnvironment: "my-sm-training-qm-se",
						CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1 + rng.IntN(5)}}})
				case 6:
					w.e.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: scenarioQueue, State: []string{"ENABLED", "DISABLED"}[rng.IntN(2)]})
				case 7:
					w.clock.Add(time.Duration(rng.IntN(3)) * time.Second)
					w.e.Tick(ctx)
				case 8:
					if rng.IntN(10) == 0 {
						w.open()
						engine.KeepReads(w.e, limit)
					}
				}
			}
			w.step()
			for _, id := range ids {
				want, werr := engine.DescribeLocked(w.e, id)
				for range 2 { // the first may keep the job, the second reads it kept
					got, err := w.e.DescribeServiceJob(ctx, id)
					if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
						g, _ := json.Marshal(got)
						x, _ := json.Marshal(want)
						t.Fatalf("run %d step %d: job %s described without the lock as\n%s (%v)\nunder it as\n%s (%v)", run, step, id, g, err, x, werr)
					}
				}
			}
			if n := engine.KeepReads(w.e, 0); n > limit {
				t.Fatalf("run %d step %d: %d jobs kept, more than %d", run, step, n, limit)
			}
			if n := engine.HeadlessReads(w.e); n > 0 {
				t.Fatalf("run %d step %d: %d describes found a kept waiting job's share without a head", run, step, n)
			}
		}
		unlocked += w.e.ReadWaits().Unlocked
	}
	if unlocked == 0 {
		t.Fatal("no describe was served without the lock")
	}
	t.Logf("%d describes served without the lock", unlocked)
}

// TestDescribeWithoutLockWhileCyclesRun describes jobs from four goroutines
// while cycles submit, reprioritise, run and end them (run it with -race).
// Each goroutine must never see a job's history shrink; a describe after
// an answered priority change must show it; and at the end, with no cycle
// running, every describe equals the one made under the lock.
func TestDescribeWithoutLockWhileCyclesRun(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	ctx := context.Background()
	var mu sync.Mutex
	var ids []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			seen := map[string]int{} // history length last seen, by job
			for i := g; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				n := len(ids)
				var id string
				if n > 0 {
					id = ids[i%n]
				}
				mu.Unlock()
				if n == 0 {
					continue
				}
				j, err := h.e.DescribeServiceJob(ctx, id)
				if err != nil || j.JobID != id || len(j.History) < seen[id] {
					t.Errorf("describe %s: %s %q, %d transitions after %d, %v", id, j.Status, j.StatusReason, len(j.History), seen[id], err)
					return
				}
				seen[id] = len(j.History)
				time.Sleep(50 * time.Microsecond) // leave the loop some of the two cores
			}
		})
	}
	for i := range 300 {
		prio := i % 5
		j, err := h.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "j", JobQueue: scenarioQueue, ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: payload("ml.g5.xlarge", 1, map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": strconv.Itoa(1 + i%7)}),
			QuotaShareName:        []string{"QS1", "QS2", "QS3"}[i%3], SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		ids = append(ids, j.JobID)
		mu.Unlock()
		id := ids[i/2]
		if _, err := h.e.UpdateServiceJob(ctx, id, 7+i%2); err != nil {
			continue // it ended meanwhile
		}
		if j, err := h.e.DescribeServiceJob(ctx, id); err != nil || j.SchedulingPriority != 7+i%2 {
			t.Fatalf("describe %s after its priority became %d: %d, %v", id, 7+i%2, j.SchedulingPriority, err)
		}
	}
	close(done)
	wg.Wait()
	if h.e.ReadWaits().Unlocked == 0 {
		t.Fatal("no describe was served without the lock while cycles ran")
	}
	for _, id := range ids {
		h.waitStatus(id, "SUCCEEDED")
	}
	for _, id := range ids {
		want, werr := engine.DescribeLocked(h.e, id)
		for range 2 {
			got, err := h.e.DescribeServiceJob(ctx, id)
			if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("job %s described without the lock as %+v (%v), under it as %+v (%v)", id, got, err, want, werr)
			}
		}
	}
	if n := engine.HeadlessReads(h.e); n > 0 {
		t.Fatalf("%d describes found a kept waiting job's share without a head", n)
	}
}
