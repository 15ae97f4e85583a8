package core

// Waking waiting heads. A clean share's head failed every pass in the last
// cycle, and only two kinds of change can let it move: a change to its own
// share (which marks the share dirty), or more capacity for a unit it needs.
// Rather than marking every head that needs a unit whenever the unit
// changes, the pool remembers which units were touched and each pass wakes
// only the heads that pass could place, and only when the unit's state
// allows it:
//   - pass 1 and 2 (own capacity, reclaim) need free SE capacity or
//     borrowers of the unit, and only heads that fit their own limit;
//   - pass 3 (borrow) needs free capacity and lendable capacity, and only
//     LEND_AND_BORROW heads beyond their own limit;
//   - pass 4 (in-share) only heads of shares with in-share preemption, on
//     any change: the head's own lower-priority victims free capacity too,
//     so even a unit that stays full (or over its limit, after the SE
//     shrank) may now be enough.
// Success in every pass is monotone in free and borrowed capacity, so a
// head not woken could not have been placed.

type waitKind uint8

const (
	waitNone   waitKind = iota
	waitOwn             // the head fits its share's own limit
	waitBorrow          // LEND_AND_BORROW, the head needs more than its limit
	waitRest            // neither; only in-share preemption could place it
	waitKinds
)

// register files share s, turning clean with head h, under the units h needs.
func (c *Core) register(s *share, h *job) {
	c.unregister(s)
	if h == nil {
		return
	}
	k, cand := waitRest, c.mayPreemptInShare(s, h)
	switch {
	case s.strategy == 0 || c.ownFit(h):
		k = waitOwn
	case s.strategy == LendAndBorrow:
		k = waitBorrow
	case !cand:
		return // only a change to its own share can help it
	}
	e := s.q.env
	s.waitKind = k
	s.inShareCandidate = cand
	for _, d := range h.needs() {
		if s.inShareCandidate {
			e.candidates[d.u]++
		}
		s.waitOn = append(s.waitOn, d.u)
		s.waitPos = append(s.waitPos, len(e.waiting[k][d.u]))
		e.waiting[k][d.u] = append(e.waiting[k][d.u], s)
	}
}

// mayPreemptInShare tells whether head h could ever preempt in its own
// share as the share stands: in-share preemption is on and some dispatched
// job of the share has a strictly lower priority. Until the share itself
// changes (which marks it dirty), that answer holds.
func (c *Core) mayPreemptInShare(s *share, h *job) bool {
	if !s.inShare {
		return false
	}
	var last *job
	s.dispatched.EachReverse(func(j *job) bool { last = j; return false })
	return last != nil && last.prio < h.prio
}

// unregister removes s from the wait lists (swap with the last entry).
func (c *Core) unregister(s *share) {
	if s.waitKind == waitNone {
		return
	}
	e := s.q.env
	for i, u := range s.waitOn {
		if s.inShareCandidate {
			e.candidates[u]--
		}
		list := e.waiting[s.waitKind][u]
		pos, last := s.waitPos[i], len(list)-1
		moved := list[last]
		list[pos] = moved
		e.waiting[s.waitKind][u] = list[:last]
		if moved != s {
			for k, mu := range moved.waitOn {
				if mu == u {
					moved.waitPos[k] = pos
				}
			}
		}
	}
	s.waitKind, s.waitOn, s.waitPos = waitNone, s.waitOn[:0], s.waitPos[:0]
}

// touch notes that unit u may have more free, lendable or borrowed capacity.
func (c *Core) touch(e *env, u int32) {
	if !e.touched[u] {
		e.touched[u] = true
		e.touchedList = append(e.touchedList, u)
	}
	if !e.queued {
		e.queued = true
		c.dirtyEnvs = append(c.dirtyEnvs, e)
	}
}

// wake marks dirty the waiting heads that the given pass might place.
func (c *Core) wake(e *env, pass int) {
	for _, u := range e.touchedList {
		seFree := e.limit[u] - e.use[u]
		lendable := e.lenderIdle[u] + max(0, e.limit[u]-e.sumLimit[u]) - e.borrowed[u]
		freeOrBorrowers := seFree > 0 || e.borrowed[u] > 0
		switch pass {
		case 1, 2:
			if freeOrBorrowers {
				c.wakeList(e, waitOwn, u, false)
			}
		case 3:
			if seFree > 0 && lendable > 0 {
				c.wakeList(e, waitBorrow, u, false)
			}
		case 4:
			if e.candidates[u] == 0 {
				continue // the usual case: scanning the lists would find none
			}
			for k := waitOwn; k < waitKinds; k++ {
				c.wakeList(e, k, u, true)
			}
		}
	}
}

func (c *Core) wakeList(e *env, k waitKind, u int32, inShareOnly bool) {
	list := e.waiting[k][u]
	for i := len(list) - 1; i >= 0; i-- {
		if s := list[i]; !inShareOnly || s.inShareCandidate {
			c.unregister(s)
			c.markShare(s)
		}
	}
}

// untouch forgets the touched units at the end of a pool's cycle.
func (e *env) untouch() {
	for _, u := range e.touchedList {
		e.touched[u] = false
	}
	e.touchedList = e.touchedList[:0]
}
