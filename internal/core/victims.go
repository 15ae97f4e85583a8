package core

// Victim selection simulates on the core's own state (kueue's way): victims
// are removed tentatively until the head fits, those not needed are put
// back in reverse order so the set is minimal, and everything is restored
// before the caller preempts for real. A selection that fails leaves the
// state exactly as it was.

func (c *Core) takeOut(v *job) {
	v.removed = true
	for _, d := range v.demand {
		v.sh.adjust(d.u, -int(d.n))
	}
}

func (c *Core) putBack(v *job) {
	v.removed = false
	for _, d := range v.demand {
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
// u are the last jobs using u in dispatch order, so each share offers its
// last such job while it uses more of u than its limit.
func (c *Core) nextBorrower(h *job) *job {
	e := h.sh.q.env
	any := false
	for _, d := range h.demand {
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
			for _, d := range h.demand {
				if x.use[d.u] <= x.limit[d.u] {
					continue
				}
				if v := lastUsing(x, d.u); v != nil && (best == nil || victimLess(v, best)) {
					best = v
				}
			}
		}
	}
	return best
}

// lastUsing is the last dispatched job of x, not taken out, that uses u.
func lastUsing(x *share, u int32) *job {
	var found *job
	x.dispatched.EachReverse(func(j *job) bool {
		if !j.removed && j.uses(u) > 0 {
			found = j
			return false
		}
		return true
	})
	return found
}

// inShareVictims chooses the lower-priority jobs of h's own share (and, if
// then needed, borrowers of other shares) to preempt so that h can be
// placed (pass 4).
func (c *Core) inShareVictims(h *job) ([]*job, bool) {
	s := h.sh
	var own []*job
	for !c.ownFit(h) && !c.placeBorrow(h) {
		v := lastLive(s)
		if v == nil || v.prio >= h.prio {
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
	own = c.trim(own, func() bool { return c.placeOwn(h) || c.placeBorrow(h) })
	vs := append(own, cross...)
	c.putBackAll(vs)
	return vs, len(vs) > 0
}

// lastLive is the last dispatched job of s not taken out.
func lastLive(s *share) *job {
	var found *job
	s.dispatched.EachReverse(func(j *job) bool {
		if !j.removed {
			found = j
			return false
		}
		return true
	})
	return found
}
