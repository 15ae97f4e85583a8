package core

// Victim selection simulates on the core's own state (kueue's way): victims
// are removed tentatively until the head fits, those not needed are put
// back in reverse order so the set is minimal, and everything is restored
// before the caller preempts for real. A selection that fails leaves the
// state exactly as it was.

func (c *Core) takeOut(v *job) {
	v.removed = true
	for _, d := range v.needs() {
		v.sh.adjust(d.u, -int(d.n))
	}
}

func (c *Core) putBack(v *job) {
	v.removed = false
	for _, d := range v.needs() {
		v.sh.adjust(d.u, int(d.n))
	}
}

func (c *Core) putBackAll(vs []*job) {
	for i := len(vs) - 1; i >= 0; i-- {
		c.putBack(vs[i])
	}
}

// trim puts back, in reverse order, each victim without which fits still
// holds; the rest stay taken out. It returns those, in removal order.
func (c *Core) trim(vs []*job, fits func() bool) []*job {
	keep := make([]bool, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		c.putBack(vs[i])
		if !fits() {
			c.takeOut(vs[i])
			keep[i] = true
		}
	}
	var out []*job
	for i, v := range vs {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}

// reclaimVictims chooses the borrowers to preempt so that head h, which
// fits its own limit, can be placed (pass 2).
func (c *Core) reclaimVictims(h *job) ([]*job, bool) {
	vs, ok := c.takeBorrowers(h)
	if !ok {
		return nil, false
	}
	c.putBackAll(vs)
	return vs, true
}

// takeBorrowers takes out borrowers of other shares, lowest in victim order
// first and re-deriving who borrows after each, until placeOwn(h); then
// trims the set. On success the victims stay taken out.
func (c *Core) takeBorrowers(h *job) ([]*job, bool) {
	var vs []*job
	for !c.placeOwn(h) {
		v := c.nextBorrower(h)
		if v == nil {
			c.putBackAll(vs)
			return nil, false
		}
		c.takeOut(v)
		vs = append(vs, v)
	}
	return c.trim(vs, func() bool { return c.placeOwn(h) }), true
}

// nextBorrower is the first, in victim order, of the dispatched jobs of
// other shares that borrow a unit h needs. Within a share the borrowers of
// u are the last jobs using u in dispatch order, so each share offers the
// first in victim order of those while it uses more of u than its limit.
func (c *Core) nextBorrower(h *job) *job {
	e := h.sh.q.env
	any := false
	for _, d := range h.needs() {
		if e.borrowed[d.u] > 0 {
			any = true
		}
	}
	if !any {
		return nil
	}
	var best *job
	for _, q := range e.queues {
		for _, x := range q.shares {
			if x == h.sh {
				continue
			}
			for _, d := range h.needs() {
				if x.use[d.u] <= x.limit[d.u] {
					continue
				}
				if v := c.firstBorrower(x, d.u); v != nil && (best == nil || victimLess(v, best)) {
					best = v
				}
			}
		}
	}
	return best
}

// firstBorrower is the first in victim order of the dispatched jobs of x,
// not taken out and not protected by x's minimum runtime, that borrow u; x
// must use more of u than its limit.
//
// NB: victim order is the reverse of dispatch order except for the final
// job ID, which is ascending in both. So the first victim is not simply
// the last borrower: among the borrowers that tie with the last one on
// priority and dispatch time, it is the one with the smallest ID. Those
// are the borrowers met walking back from the end while the tie lasts.
// Protected borrowers are walked over (they still borrow); jobs that tie
// share their protection, so a tie is all protected or none.
func (c *Core) firstBorrower(x *share, u int32) *job {
	var found *job
	after := 0 // instances of u held by the jobs after j in dispatch order
	x.dispatched.EachReverse(func(j *job) bool {
		n := j.uses(u)
		if j.removed || n == 0 {
			return true
		}
		if x.use[u]-after <= x.limit[u] || (found != nil && !sameTie(j, found)) {
			return false // j and the jobs before it are own
		}
		if found == nil && c.protected(j) {
			c.noteProtected(j)
			after += n
			return true
		}
		found = j
		after += n
		return true
	})
	return found
}

// sameTie tells whether a and b tie in victim order up to the job ID.
func sameTie(a, b *job) bool { return a.prio == b.prio && a.dispatchedAt == b.dispatchedAt }

// inShareVictims chooses the lower-priority jobs of h's own share (and, if
// then needed, borrowers of other shares) to preempt so that h can be
// placed (pass 4).
func (c *Core) inShareVictims(h *job) ([]*job, bool) {
	s := h.sh
	var own []*job
	for !c.ownFit(h) && !c.placeBorrow(h) {
		v := c.firstVictim(s, h.prio)
		if v == nil {
			c.putBackAll(own)
			return nil, false
		}
		c.takeOut(v)
		own = append(own, v)
	}
	var cross []*job
	if !c.placeOwn(h) && !c.placeBorrow(h) {
		var ok bool
		if cross, ok = c.takeBorrowers(h); !ok {
			c.putBackAll(own)
			return nil, false
		}
	}
	// NB: once borrowers of other shares are taken, the head must stay
	// within its own limit: borrowing never preempts another share's job.
	// Putting back an own-share victim may otherwise let it borrow instead,
	// on the very capacity just reclaimed.
	fits := func() bool { return c.placeOwn(h) || c.placeBorrow(h) }
	if len(cross) > 0 {
		fits = func() bool { return c.placeOwn(h) }
	}
	own = c.trim(own, fits)
	vs := append(own, cross...)
	c.putBackAll(vs)
	return vs, len(vs) > 0
}

// firstVictim is the first in victim order of the dispatched jobs of s
// with a priority below prio, not taken out and not protected by its
// minimum runtime: among those that tie with the last such in dispatch
// order on priority and dispatch time, the one with the smallest ID.
func (c *Core) firstVictim(s *share, prio int32) *job {
	var found *job
	s.dispatched.EachReverse(func(j *job) bool {
		if j.removed {
			return true
		}
		if j.prio >= prio || (found != nil && !sameTie(j, found)) {
			return false // victim order: the rest rank no lower
		}
		if found == nil && c.protected(j) {
			c.noteProtected(j)
			return true
		}
		found = j
		return true
	})
	return found
}
