package core_test

import (
	"container/heap"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// The Kueue scheduler-performance baseline (shared/bench/kueue-baseline.md)
// replayed through the core alone on a virtual clock: 5 queues × 6 shares of
// 20 instances, LEND_AND_BORROW with borrowLimit 500 and in-share
// preemption; per share 350 small, 100 medium and 50 large jobs submitted
// at fixed intervals. A dispatched job runs for its runtime and ends.

type kueueClass struct {
	name              string
	count             int
	interval, runtime time.Duration
	size, prio        int
}

var kueueClasses = []kueueClass{
	{"small", 350, 100 * time.Millisecond, 200 * time.Millisecond, 1, 50},
	{"medium", 100, 500 * time.Millisecond, 500 * time.Millisecond, 5, 100},
	{"large", 50, 1200 * time.Millisecond, 1000 * time.Millisecond, 20, 200},
}

type simEvent struct {
	at      time.Duration
	seq     int
	submit  *core.Submit
	end     string // job whose attempt ends
	attempt int
}

type eventHeap []simEvent

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(simEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type kueueResult struct {
	wall        time.Duration
	waits       map[string][]time.Duration
	preemptions int
	usage       float64 // mean share usage over the run
}

func runKueueBaseline(tb testing.TB) kueueResult {
	c := core.New()
	const queues, shares = 5, 6
	var evs eventHeap
	seq := 0
	class := map[string]kueueClass{}
	for q := range queues {
		qn, unit := "q"+strconv.Itoa(q), "ml.m5.large"
		se := "se" + strconv.Itoa(q)
		mustApply(tb, c, core.PutEnv{Name: se, Limits: []core.UnitCount{{Unit: unit, Count: shares * 20}}})
		mustApply(tb, c, core.PutQueue{Name: qn, Env: se, QuotaShares: true})
		for s := range shares {
			sn := "s" + strconv.Itoa(s)
			mustApply(tb, c, core.PutShare{Queue: qn, Name: sn, Limits: []core.UnitCount{{Unit: unit, Count: 20}},
				Strategy: core.LendAndBorrow, BorrowLimit: 500, InSharePreemption: true})
			for _, k := range kueueClasses {
				for i := range k.count {
					id := fmt.Sprintf("%s-%s-%s-%d", qn, sn, k.name, i)
					at := time.Duration(i) * k.interval
					class[id] = k
					seq++
					heap.Push(&evs, simEvent{at: at, seq: seq, submit: &core.Submit{Job: id, Queue: qn, Share: sn,
						Demand: []core.UnitCount{{Unit: unit, Count: k.size}}, Priority: k.prio, QueuedAt: int64(at) + int64(seq), PreemptionRetries: -1}})
				}
			}
		}
	}
	t0 := time.Unix(0, 0)
	res := kueueResult{waits: map[string][]time.Duration{}}
	submitted := map[string]time.Duration{}
	attempt := map[string]int{}
	var busy, last time.Duration // instance-time in use, for usage
	inUse := 0
	for evs.Len() > 0 {
		now := evs[0].at
		busy += time.Duration(inUse) * (now - last)
		last = now
		for evs.Len() > 0 && evs[0].at == now {
			ev := heap.Pop(&evs).(simEvent)
			switch {
			case ev.submit != nil:
				mustApply(tb, c, *ev.submit)
				submitted[ev.submit.Job] = now
			case attempt[ev.end] == ev.attempt:
				mustApply(tb, c, core.AttemptEnded{Job: ev.end})
				inUse -= class[ev.end].size
			}
		}
		for _, d := range c.Step(t0.Add(now)).List {
			k := class[d.Job]
			switch d.Kind {
			case core.Dispatch:
				if attempt[d.Job] == 0 { // time to first dispatch, as Kueue's time to admission
					res.waits[k.name] = append(res.waits[k.name], now-submitted[d.Job])
				}
				attempt[d.Job]++
				inUse += k.size
				seq++
				heap.Push(&evs, simEvent{at: now + k.runtime, seq: seq, end: d.Job, attempt: attempt[d.Job]})
			case core.Preempt:
				attempt[d.Job]++ // its pending end no longer counts
				inUse -= k.size
				res.preemptions++
			}
		}
		res.wall = now
	}
	if c.Len() != 0 {
		tb.Fatalf("%d jobs left in the core", c.Len())
	}
	res.usage = float64(busy) / float64(res.wall) / float64(queues*shares*20)
	return res
}

func mean(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t / time.Duration(max(1, len(ds)))
}

func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// TestKueueBaseline checks the replay runs to completion with every job
// dispatched, and reports its figures.
func TestKueueBaseline(t *testing.T) {
	res := runKueueBaseline(t)
	total := 0
	for _, k := range kueueClasses {
		ws := res.waits[k.name]
		total += len(ws)
		t.Logf("%-6s time to first dispatch: mean %v p99 %v (jobs %d)", k.name, mean(ws).Round(time.Millisecond), p99(ws).Round(time.Millisecond), len(ws))
	}
	t.Logf("wall %v (physical limit 66s), usage %.1f%%, preemptions %d", res.wall, res.usage*100, res.preemptions)
	if total != 15000 {
		t.Fatalf("%d jobs dispatched, want 15000", total)
	}
	if res.wall < 66*time.Second {
		t.Fatalf("wall %v is below the physical limit of 66s: the replay is wrong", res.wall)
	}
}

// BenchmarkKueueBaseline measures how long the core takes to process the
// whole 15,000-job trace in virtual time.
func BenchmarkKueueBaseline(b *testing.B) {
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		runKueueBaseline(b)
	}
}
