package usage

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
)

func TestPartsMergeUnitsAndLenders(t *testing.T) {
	h := core.Holding{
		Own:   []core.UnitCount{{Unit: "ml.g5.12xlarge", Count: 2}, {Unit: "ml.m5.large", Count: 1}},
		Loans: []core.Loan{{Unit: "ml.g5.12xlarge", Count: 1, Lender: "QS2"}, {Unit: "ml.g5.xlarge", Count: 3, Lender: ""}, {Unit: "ml.g5.xlarge", Count: 1, Lender: "QS2"}},
	}
	got := Parts(h)
	want := []Part{{Own, "", 3, 8}, {Borrowed, "", 3, 3}, {Borrowed, "QS2", 2, 5}}
	if len(got) != len(want) {
		t.Fatalf("Parts = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Parts = %+v, want %+v", got, want)
		}
	}
}

// TestTrackerCoversEachAttemptOnce holds random parts over random times,
// ends attempts (some preempted), resumes the open segments in a new
// Tracker now and then (a restart), and checks that the segments, as
// written by key, sum to each attempt's interval times its instances, in
// one bucket and in many.
func TestTrackerCoversEachAttemptOnce(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		tr := NewTracker()
		written := map[[2]any]Segment{}
		write := func(ss []Segment) {
			for _, s := range ss {
				written[[2]any{s.Attempt, s.Seq}] = s
			}
		}
		type interval struct {
			start, stop int64
			instances   int
			preempted   bool
		}
		want := map[string]*interval{}
		now := int64(1000)
		ids := []string{"a", "b", "c", "d"}
		for step := 0; step < 200; step++ {
			now += r.Int64N(5000)
			id := ids[r.IntN(len(ids))]
			switch iv := want[id]; {
			case r.IntN(10) == 0:
				// A restart: a new Tracker resumes what is open.
				tr = NewTracker()
				for _, s := range written {
					if s.Stop == 0 {
						tr.Resume(s)
					}
				}
			case iv == nil || iv.stop > 0:
				// Dispatch a new attempt of n instances.
				n := 1 + r.IntN(4)
				id += "-" + strconv.Itoa(step)
				ids = append(ids, id)
				want[id] = &interval{start: now, instances: n}
				write(tr.Hold(Attempt{ID: id, Queue: "q", Share: "QS1"}, randomParts(r, n), now))
			case r.IntN(3) == 0:
				iv.stop, iv.preempted = now, r.IntN(2) == 0
				write(tr.End(id, now, iv.preempted))
				if iv.preempted {
					// What the store's PreemptedAttempts does.
					for k, s := range written {
						if s.Attempt == id {
							s.Preempted = true
							written[k] = s
						}
					}
				}
			default:
				write(tr.Hold(Attempt{ID: id, Queue: "q", Share: "QS1"}, randomParts(r, iv.instances), now))
			}
		}
		end := now + 1000
		var total, preempted int64
		for _, iv := range want {
			stop := iv.stop
			if stop == 0 {
				stop = end
			}
			total += (stop - iv.start) * int64(iv.instances)
			if iv.preempted {
				preempted += (stop - iv.start) * int64(iv.instances)
			}
		}
		for _, every := range []int64{0, 777, 10000} {
			rep := NewReport(Query{From: 0, To: end + 1, Every: every, By: ByShare}, end)
			for _, s := range written {
				rep.Add(s)
			}
			var got, gotPreempted int64
			for _, row := range rep.Rows() {
				switch row.Kind {
				case Own, Borrowed:
					got += row.InstanceMillis
				case Preempted:
					gotPreempted += row.InstanceMillis
				}
			}
			if got != total || gotPreempted != preempted {
				t.Fatalf("seed %d every %d: instance-ms %d (preempted %d), want %d (%d)", seed, every, got, gotPreempted, total, preempted)
			}
		}
	}
}

// randomParts splits n instances into own and borrowed parts.
func randomParts(r *rand.Rand, n int) []Part {
	own := r.IntN(n + 1)
	var out []Part
	if own > 0 {
		out = append(out, Part{Kind: Own, Instances: own, GPUs: own * 8})
	}
	if n-own > 0 {
		out = append(out, Part{Kind: Borrowed, Peer: []string{"", "QS2"}[r.IntN(2)], Instances: n - own, GPUs: (n - own) * 8})
	}
	return out
}

func TestReportLentMirrorsBorrowed(t *testing.T) {
	segs := []Segment{
		{Attempt: "a", Queue: "q", Share: "QS1", Owner: "alice", Kind: Own, Instances: 2, GPUs: 16, Start: 0, Stop: 3600_000},
		{Attempt: "b", Queue: "q", Share: "QS1", Owner: "bob", Kind: Borrowed, Peer: "QS2", Instances: 1, GPUs: 8, Start: 1800_000, Stop: 0, Preempted: false},
	}
	rep := NewReport(Query{From: 0, To: 7200_000, Every: 3600_000, By: ByShare}, 5400_000)
	for _, s := range segs {
		rep.Add(s)
	}
	got := ""
	for _, r := range rep.Rows() {
		got += seconds(r.From) + " " + r.Key + " " + r.Kind + " " + r.Peer + " " + seconds(r.InstanceMillis) + " " + seconds(r.GPUMillis) + "\n"
	}
	want := "0 QS1 own  7200 57600\n0 QS1 borrowed QS2 1800 14400\n0 QS2 lent QS1 1800 14400\n" +
		"3600 QS1 borrowed QS2 1800 14400\n3600 QS2 lent QS1 1800 14400\n"
	if got != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", got, want)
	}
}

func TestQueryCheck(t *testing.T) {
	for _, q := range []Query{{From: 0, To: 10, By: "team"}, {From: 10, To: 10, By: ByShare}, {From: 0, To: 1e9, Every: 1, By: ByShare}} {
		if q.Check() == nil {
			t.Errorf("Check(%+v) accepted it", q)
		}
	}
	if err := (Query{From: 0, To: 86400_000, Every: 3600_000, By: ByOwner}).Check(); err != nil {
		t.Error(err)
	}
}

// seconds writes milliseconds as seconds with three decimals, exactly.
func seconds(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	if ms%1000 == 0 {
		return fmt.Sprintf("%s%d", sign, ms/1000)
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}
