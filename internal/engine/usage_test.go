package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/usage"
)

// TestUsageEqualsAttemptIntervals runs random submissions, ends,
// terminations, preemptions (cross-share and in-share) and restarts of the
// engine over a real store, then checks that the usage history adds up,
// to the millisecond, to the attempts' intervals as the jobs record them
// (from each dispatch to the attempt's stop, or now), by share, owner,
// share identifier and queue, in one bucket and in many; and that the part
// of preempted attempts and the borrowed capacity lent add up too.
func TestUsageEqualsAttemptIntervals(t *testing.T) {
	var preempted int64
	// Seeds 21 and 27 hold a job waiting in a share with idle capacity
	// while borrowers stand on it.
	for _, seed := range []uint64{0, 1, 2, 3, 4, 5, 21, 27} {
		t.Run(fmt.Sprint("sqlite/", seed), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sharq.db")
			preempted += checkUsageAgainstAttempts(t, seed, func() store.Store {
				st, err := sqlite.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
	// A failover: each restart is another server opening the shared
	// store.
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		preempted += checkUsageAgainstAttempts(t, 7, func() store.Store {
			st, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
	if preempted == 0 {
		t.Error("no attempt was preempted: the runs test too little")
	}
}

// checkUsageAgainstAttempts returns the milliseconds held by attempts that
// were later preempted.
func checkUsageAgainstAttempts(t *testing.T, seed uint64, open func() store.Store) int64 {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 31))
	_, clock := syncStore(t)
	st := open()
	t.Cleanup(func() { st.Close() })
	start := func() *engine.Engine {
		e, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clock}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := start()
	h := &harness{t: t, e: e}
	h.setupWalkthrough()
	shares := []string{"QS1", "QS1", "QS1", "QS2", "QS3"}
	if seed%2 == 1 {
		// More lending and borrowing shares, some with room to borrow
		// more than their limit, and spare capacity beyond the limits:
		// whose capacity a borrower stands on moves as the lenders' queues
		// change, with nothing of the borrower's share changing.
		for i, c := range []struct {
			strategy string
			limit    int
		}{{"LEND", 1}, {"LEND_AND_BORROW", 2}, {"LEND", 2}, {"LEND_AND_BORROW", 1}} {
			name := fmt.Sprint("QS", 4+i)
			in := batchmodel.CreateQuotaShareInput{Name: name, JobQueue: "my-sm-training-qm-jq",
				CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: c.limit}},
				ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: c.strategy},
				PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"}}
			if c.strategy == "LEND_AND_BORROW" {
				in.ResourceSharingConfiguration.BorrowLimit = ptr(-1)
			}
			if _, err := e.CreateQuotaShare(ctx, in); err != nil {
				t.Fatal(err)
			}
			shares = append(shares, name, name)
		}
		if _, err := e.UpdateServiceEnvironment(ctx, batchmodel.UpdateServiceEnvironmentInput{ServiceEnvironment: "my-sm-training-qm-se",
			CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 11}}}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	owners := []string{"alice", "bob", ""}
	for step := 0; step < 150+150*int(seed%2); step++ {
		clock.Add(time.Duration(r.IntN(90_000)) * time.Millisecond)
		switch k := r.IntN(11); {
		case k < 4:
			prio := r.IntN(3)
			j, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: fmt.Sprint("j", step), JobQueue: "my-sm-training-qm-jq",
				ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1+r.IntN(1+2*int(seed%2)), nil),
				QuotaShareName: shares[r.IntN(len(shares))], SchedulingPriority: &prio,
				Owner: owners[r.IntN(len(owners))]})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.JobID)
		case k < 7 && len(ids) > 0:
			// The executor reports a live attempt ended.
			j, err := e.DescribeServiceJob(ctx, ids[r.IntN(len(ids))])
			if err != nil {
				t.Fatal(err)
			}
			if j.AttemptID != "" {
				state := []executor.State{executor.Succeeded, executor.Failed, executor.Lost}[r.IntN(3)]
				if err := e.Deliver(ctx, executor.Update{AttemptID: j.AttemptID, JobID: j.JobID, State: state, Reason: "done", At: clock.Now()}); err != nil {
					t.Fatal(err)
				}
			}
		case k < 8 && len(ids) > 0:
			if err := e.TerminateServiceJob(ctx, ids[r.IntN(len(ids))], "enough"); err != nil {
				t.Fatal(err)
			}
		case k < 9:
			// A restart, or another server taking over.
			st.Close()
			st = open()
			e = start()
		case k < 10 && len(ids) > 0:
			// A priority change of a dispatched job reorders its share:
			// own and borrowed capacity move between its jobs.
			if _, err := e.UpdateServiceJob(ctx, ids[r.IntN(len(ids))], r.IntN(4)); err != nil {
				t.Logf("update: %v", err) // an ended job refuses it
			}
		default:
			if err := e.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := engine.CheckUsageTracking(e); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	clock.Add(7 * time.Second)
	now := clock.Now().UnixMilli()

	// What the jobs record: each SCHEDULED entry begins an attempt, which
	// holds the job's instances until the job leaves SCHEDULED, STARTING
	// and RUNNING (or on until now). That is when the scheduler gave the
	// capacity to another: a preempted attempt's processes may take their
	// grace period longer, its stoppedAt then, while its preemptor holds
	// the instances; nothing here reports them gone, as the executor would.
	want := map[string]map[string]int64{} // by grouping, key → instance-ms
	var total, preempted int64
	for _, id := range ids {
		j, err := e.DescribeServiceJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for i, tr := range j.History {
			if tr.Status != record.StatusScheduled {
				continue
			}
			a := j.Attempts[k]
			k++
			stop := now
			for _, next := range j.History[i+1:] {
				if next.Status != record.StatusScheduled && next.Status != record.StatusStarting && next.Status != record.StatusRunning {
					stop = next.At
					break
				}
			}
			if a.StoppedAt != 0 && a.StoppedAt != stop {
				t.Errorf("job %s: attempt %s stopped at %d, its job left its dispatched states at %d", id, a.ServiceResourceID.Value, a.StoppedAt, stop)
			}
			n := 0
			for _, u := range j.Demand {
				n += u.Count
			}
			d := (stop - tr.At) * int64(n)
			total += d
			for by, key := range map[string]string{usage.ByShare: j.QuotaShareName, usage.ByOwner: j.Owner, usage.ByShareID: j.ShareIdentifier, usage.ByQueue: j.Queue} {
				if want[by] == nil {
					want[by] = map[string]int64{}
				}
				want[by][key] += d
			}
			if wasPreempted(&j, a) {
				preempted += d
			}
		}
		if k != len(j.Attempts) {
			t.Fatalf("job %s: %d dispatches in its history, %d attempts", id, k, len(j.Attempts))
		}
	}
	if total == 0 {
		t.Fatalf("seed %d: no capacity held: the run tests too little", seed)
	}
	for _, by := range []string{usage.ByShare, usage.ByOwner, usage.ByShareID, usage.ByQueue} {
		for _, every := range []int64{0, 60_000, 3_600_000} {
			_, rows, err := e.Usage(ctx, usage.Query{From: 0, To: now + 1, Every: every, By: by})
			if every > 0 {
				_, rows, err = e.Usage(ctx, usage.Query{Since: 10 * 3_600_000, Every: every, By: by})
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var gotPreempted, borrowedFromShares, lent int64
			for _, row := range rows {
				if row.InstanceMillis != row.GPUMillis { // ml.g5.xlarge: one GPU
					t.Errorf("%+v: GPU-ms differ from instance-ms", row)
				}
				switch row.Kind {
				case usage.Own, usage.Borrowed:
					got[row.Key] += row.InstanceMillis
					if row.Kind == usage.Borrowed && row.Peer != "" {
						borrowedFromShares += row.InstanceMillis
					}
				case usage.Preempted:
					gotPreempted += row.InstanceMillis
				case usage.Lent:
					lent += row.InstanceMillis
				}
			}
			for key, w := range want[by] {
				if got[key] != w {
					t.Errorf("seed %d by %s every %d: %q used %d ms, its attempts held %d", seed, by, every, key, got[key], w)
				}
			}
			if len(got) != len(want[by]) {
				t.Errorf("seed %d by %s: keys %v, want those of %v", seed, by, got, want[by])
			}
			if gotPreempted != preempted {
				t.Errorf("seed %d by %s every %d: preempted %d ms, want %d", seed, by, every, gotPreempted, preempted)
			}
			if by == usage.ByShare && lent != borrowedFromShares {
				t.Errorf("seed %d: lent %d ms, borrowed from shares %d", seed, lent, borrowedFromShares)
			}
		}
	}
	return preempted
}

// wasPreempted tells whether attempt a of job j was preempted.
func wasPreempted(j *record.Job, a record.Attempt) bool {
	if ps := j.PreemptionSummary; ps != nil {
		for _, p := range ps.RecentPreemptedAttempts {
			if p.ServiceResourceID.Value == a.ServiceResourceID.Value {
				return true
			}
		}
	}
	return false
}

// TestUsageRetention checks that closed segments older than the retention
// go at the first cycle, and that a retention of for ever keeps them.
func TestUsageRetention(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		retention time.Duration
		want      []string
	}{{48 * time.Hour, []string{"open", "recent"}}, {-1, []string{"open", "old", "recent"}}} {
		st, clock := syncStore(t)
		now := clock.Now()
		at := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
		segs := []store.UsageSegment{
			{Attempt: "old", Queue: "q", Kind: usage.Own, Instances: 1, Start: at(80 * time.Hour), Stop: at(72 * time.Hour)},
			{Attempt: "recent", Queue: "q", Kind: usage.Own, Instances: 1, Start: at(30 * time.Hour), Stop: at(24 * time.Hour)},
			{Attempt: "open", Queue: "q", Kind: usage.Own, Instances: 1, Start: at(100 * time.Hour)},
		}
		if err := st.Commit(ctx, &store.Batch{Usage: segs}); err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(ctx, engine.Options{Store: st, Driver: &engine.Driver{Clock: clock}, UsageRetention: c.retention})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := st.Usage(ctx, 0, now.UnixMilli()+1, func(s store.UsageSegment) error { got = append(got, s.Attempt); return nil }); err != nil {
			t.Fatal(err)
		}
		// By start; the open segment's attempt is gone, so the first cycle
		// closed it now, and it stays.
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("retention %v: segments %v, want %v", c.retention, got, c.want)
		}
		if c.retention < 0 {
			continue
		}
		// A quiet server purges too: a day on, "recent" passes the
		// retention, and the purge of every hour takes it; "open", closed
		// at the first cycle, stays.
		clock.Add(25 * time.Hour)
		if err := e.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		got = nil
		if err := st.Usage(ctx, 0, clock.Now().UnixMilli(), func(s store.UsageSegment) error { got = append(got, s.Attempt); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[open]" {
			t.Errorf("a day on, in a quiet server: segments %v, want [open]", got)
		}
	}
}
