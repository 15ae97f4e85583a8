package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/store"
)

// RunUsage checks the promises of store.UsageStore against the stores
// open returns, which must implement it.
func RunUsage(t *testing.T, open Opener) {
	s := suite{open: open}
	t.Run("UsageRoundTrip", func(t *testing.T) { testUsageRoundTrip(t, s) })
	t.Run("UsagePurge", func(t *testing.T) { testUsagePurge(t, s) })
}

func usageOf(t *testing.T, st store.Store) store.UsageStore {
	t.Helper()
	us, ok := st.(store.UsageStore)
	if !ok {
		t.Fatalf("%T is no store.UsageStore", st)
	}
	return us
}

func readUsage(t *testing.T, us store.UsageStore, from, to int64) []store.UsageSegment {
	t.Helper()
	var out []store.UsageSegment
	if err := us.Usage(context.Background(), from, to, func(u store.UsageSegment) error { out = append(out, u); return nil }); err != nil {
		t.Fatalf("Usage: %v", err)
	}
	return out
}

func readOpen(t *testing.T, us store.UsageStore) []store.UsageSegment {
	t.Helper()
	var out []store.UsageSegment
	if err := us.OpenUsage(context.Background(), func(u store.UsageSegment) error { out = append(out, u); return nil }); err != nil {
		t.Fatalf("OpenUsage: %v", err)
	}
	return out
}

// testUsageRoundTrip writes segments, closes and reopens some, marks an
// attempt preempted in a later batch, and reads them back by overlap,
// after a reopen too.
func testUsageRoundTrip(t *testing.T, s suite) {
	ctx := context.Background()
	st := s.mustOpen(t)
	a0 := store.UsageSegment{Attempt: "A", Seq: 0, Job: "j1", Queue: "q", Share: "QS1", ShareID: "blue", Owner: "alice",
		Kind: "own", Instances: 2, GPUs: 16, Start: 1000}
	b0 := store.UsageSegment{Attempt: "B", Seq: 0, Job: "j2", Queue: "q", Share: "QS2", Owner: "bob",
		Kind: "borrowed", Peer: "QS1", Instances: 1, GPUs: 8, Start: 2000}
	if err := st.Commit(ctx, &store.Batch{Usage: []store.UsageSegment{a0, b0}}); err != nil {
		t.Fatal(err)
	}
	if got := readOpen(t, usageOf(t, st)); !cmp.Equal(got, []store.UsageSegment{a0, b0}) {
		t.Fatalf("open usage: %s", cmp.Diff([]store.UsageSegment{a0, b0}, got))
	}
	// A closes at 3000 and A/1 opens; within one batch the later entry of
	// a key wins.
	a0c, a1 := a0, a0
	a0c.Stop = 3000
	a1.Seq, a1.Kind, a1.Peer, a1.Start = 1, "borrowed", "", 3000
	stale := a0
	stale.Stop = 2500
	if err := st.Commit(ctx, &store.Batch{Usage: []store.UsageSegment{stale, a0c, a1}}); err != nil {
		t.Fatal(err)
	}
	// B ends preempted: its segment closes and every one of its segments
	// is marked.
	b0c := b0
	b0c.Stop = 4000
	if err := st.Commit(ctx, &store.Batch{Usage: []store.UsageSegment{b0c}, PreemptedAttempts: []string{"B"}}); err != nil {
		t.Fatal(err)
	}
	b0c.Preempted = true
	st.Close()
	st = s.mustOpen(t)
	us := usageOf(t, st)
	if got := readOpen(t, us); !cmp.Equal(got, []store.UsageSegment{a1}) {
		t.Errorf("open usage after reopen: %s", cmp.Diff([]store.UsageSegment{a1}, got))
	}
	for _, c := range []struct {
		from, to int64
		want     []store.UsageSegment
	}{
		{0, 10000, []store.UsageSegment{a0c, b0c, a1}},
		{0, 1000, nil}, // ends where A begins
		{3000, 3001, []store.UsageSegment{b0c, a1}},      // A/0 stopped at 3000
		{4000, 1 << 62, []store.UsageSegment{a1}},        // B stopped at 4000; A/1 is open
		{2999, 3000, []store.UsageSegment{a0c, b0c}},     // A/1 starts at 3000
		{1500, 2001, []store.UsageSegment{a0c, b0c}},     // ordered by start
		{5000, 6000, []store.UsageSegment{a1}},           // open: held still
		{10, 20, nil},                                    // before everything
		{1 << 40, 1<<40 + 1, []store.UsageSegment{a1}},   // an open one, far on
		{3000, 4000, []store.UsageSegment{b0c, a1}},      // half-open bounds
		{0, 1 << 62, []store.UsageSegment{a0c, b0c, a1}}, // everything
	} {
		if got := readUsage(t, us, c.from, c.to); !cmp.Equal(got, c.want) {
			t.Errorf("Usage(%d, %d): %s", c.from, c.to, cmp.Diff(c.want, got))
		}
	}
}

// testUsagePurge deletes closed segments that stopped before the time,
// never open ones.
func testUsagePurge(t *testing.T, s suite) {
	ctx := context.Background()
	st := s.mustOpen(t)
	us := usageOf(t, st)
	var segs []store.UsageSegment
	for i := range 10 {
		segs = append(segs, store.UsageSegment{Attempt: "A", Seq: i, Queue: "q", Kind: "own", Instances: 1, Start: int64(i * 100), Stop: int64(i*100 + 100)})
	}
	segs = append(segs, store.UsageSegment{Attempt: "B", Seq: 0, Queue: "q", Kind: "own", Instances: 1, Start: 0})
	if err := st.Commit(ctx, &store.Batch{Usage: segs}); err != nil {
		t.Fatal(err)
	}
	n, err := us.PurgeUsage(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 { // stopped at 100, 200, 300, 400
		t.Errorf("PurgeUsage(500) = %d, want 4", n)
	}
	got := readUsage(t, us, 0, 1<<62)
	if len(got) != 7 || got[0].Attempt != "B" || got[1].Seq != 4 {
		t.Errorf("after purge: %+v", got)
	}
}
