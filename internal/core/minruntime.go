package core

import (
	"container/heap"
	"time"
)

// Minimum runtime before preemption, a sharq setting per quota share (AWS
// has none): a dispatched job younger than its share's minimum is
// protected, and no pass picks it as a victim (victims.go). Its age counts
// from its dispatch, the only time the core knows of it. It still holds
// its capacity and still counts as own or borrowing.
//
// The core has no clock, so a protection ends unseen. A victim search that
// walks over a protected job records when its protection ends (wakes);
// Step, at that time or later, treats the end as more capacity for the
// units the job holds (wake.go), so the heads that were held back look
// again. NextWake tells the caller when to step. A head that fails only
// because of protected jobs is stuck on nothing else: every victim search
// that fails has walked over all the protected jobs it could use.

// protected tells whether dispatched job j is younger than its share's
// minimum runtime at the core's time.
func (c *Core) protected(j *job) bool {
	m := j.sh.minRuntime
	return m > 0 && c.now-j.dispatchedAt < m
}

// protectedUntil is when j's protection ends.
func protectedUntil(j *job) int64 { return j.dispatchedAt + j.sh.minRuntime }

// noteProtected records that a victim search walked over protected job j:
// the end of its protection wakes the pool.
func (c *Core) noteProtected(j *job) {
	if j.wakeSet {
		return
	}
	j.wakeSet = true
	heap.Push(&c.wakes, wakeAt{at: protectedUntil(j), dispatchedAt: j.dispatchedAt, slot: j.slot, gen: j.gen, j: j})
}

// expireProtections wakes, at the start of a Step, the pools whose noted
// protections have ended: the units an unprotected job holds may now be
// reclaimed, and its own share's head may now preempt it.
func (c *Core) expireProtections() {
	for len(c.wakes) > 0 && c.wakes[0].at <= c.now {
		w := heap.Pop(&c.wakes).(wakeAt)
		j := w.j
		if j.gen != w.gen || j.state != dispatched || j.dispatchedAt != w.dispatchedAt {
			continue // it ended, or was dispatched again since
		}
		j.wakeSet = false
		for _, d := range j.needs() {
			c.touch(j.sh.q.env, d.u)
		}
		c.markShare(j.sh)
	}
}

// setMinRuntime changes share s's minimum runtime. The ends of its jobs'
// protections move, so they are noted again by the next searches (the
// configuration change marks every share of the pool).
func (c *Core) setMinRuntime(s *share, m int64) {
	if s.minRuntime == m {
		return
	}
	s.minRuntime = m
	s.dispatched.Each(func(j *job) bool { j.wakeSet = false; return true })
}

// NextWake is when a protection ends that held a preemption back: the
// caller steps the core then (or sooner), or the preemptor waits for the
// next change. ok is false when none is pending. Now and then it is the end
// of a protection that no longer matters; a Step then finds nothing to do.
func (c *Core) NextWake() (t time.Time, ok bool) {
	if len(c.wakes) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, c.wakes[0].at).UTC(), true
}

// minRuntimeReason tells whether head h, which was not placed, waits for
// protected jobs, and for which: the one whose protection ends first (then
// victim order) among those it could preempt were they not protected. A
// head that fits its share's own limit could reclaim them from other
// shares when they borrow a unit it needs; a head beyond its limit, in a
// share with in-share preemption, could take them from its own share when
// their priority is lower. It only reads the state: reads share the lock.
func (c *Core) minRuntimeReason(h *job) (Reason, bool) {
	s := h.sh
	e := s.q.env
	if e.minShares == 0 || s.strategy == 0 {
		return Reason{}, false
	}
	var best *job
	consider := func(v *job) {
		if best == nil {
			best = v
			return
		}
		if a, b := protectedUntil(v), protectedUntil(best); a < b || (a == b && victimLess(v, best)) {
			best = v
		}
	}
	switch {
	case c.ownFit(h):
		if c.placeOwn(h) {
			return Reason{}, false
		}
		for _, q := range e.queues {
			for _, x := range q.shares {
				if x == s || x.minRuntime == 0 {
					continue
				}
				for _, d := range h.needs() {
					c.protectedBorrowers(x, d.u, consider)
				}
			}
		}
	case s.inShare && !c.placeBorrow(h):
		s.dispatched.EachReverse(func(j *job) bool {
			if j.prio >= h.prio {
				return false // victim order: the rest rank no lower
			}
			if c.protected(j) {
				consider(j)
			}
			return true
		})
	}
	if best == nil {
		return Reason{}, false
	}
	return Reason{Code: ReasonMinRuntime, Job: best.id, Share: best.sh.name,
		MinRuntime: time.Duration(best.sh.minRuntime), Until: protectedUntil(best)}, true
}

// protectedBorrowers calls fn with each protected job of share x that
// borrows unit u.
func (c *Core) protectedBorrowers(x *share, u int32, fn func(*job)) {
	if x.use[u] <= x.limit[u] {
		return
	}
	after := 0
	x.dispatched.EachReverse(func(j *job) bool {
		n := j.uses(u)
		if n == 0 {
			return true
		}
		if x.use[u]-after <= x.limit[u] {
			return false
		}
		if c.protected(j) {
			fn(j)
		}
		after += n
		return true
	})
}

// wakeAt is the end of a protection, for the job in slot at generation
// gen dispatched at dispatchedAt; one that ended or was dispatched again
// since is skipped.
type wakeAt struct {
	at, dispatchedAt int64
	slot, gen        uint32
	j                *job
}

// wakeHeap orders the ends by time, then slot: equal events, equal order.
type wakeHeap []wakeAt

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, k int) bool {
	if h[i].at != h[k].at {
		return h[i].at < h[k].at
	}
	return h[i].slot < h[k].slot
}
func (h wakeHeap) Swap(i, k int) { h[i], h[k] = h[k], h[i] }
func (h *wakeHeap) Push(x any)   { *h = append(*h, x.(wakeAt)) }
func (h *wakeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
