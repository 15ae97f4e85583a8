package core

// The placement predicates of spec 2.3, evaluated against current usage
// (which victim selection changes tentatively).

// free is what share s may take of unit u now: the SE's free capacity less
// the idle capacity other RESERVE shares keep for themselves.
func (c *Core) free(s *share, u int32) int {
	e := s.q.env
	f := e.limit[u] - e.use[u] - e.reserveIdle[u]
	if s.strategy == Reserve {
		f += s.ownIdle(u)
	}
	return f
}

// lendableTo is what other shares can lend s of unit u: their idle
// capacity if they lend, plus SE capacity beyond all share limits, less what
// is already lent out.
func (c *Core) lendableTo(s *share, u int32) int {
	e := s.q.env
	n := e.lenderIdle[u] + max(0, e.limit[u]-e.sumLimit[u]) - e.borrowed[u]
	if s.lender() {
		n -= s.ownIdle(u)
	}
	return n
}

// ownFit: the job fits within its share's own limit.
func (c *Core) ownFit(j *job) bool {
	s := j.sh
	for _, d := range j.needs() {
		if s.use[d.u]+int(d.n) > s.limit[d.u] {
			return false
		}
	}
	return true
}

// placeOwn: ownFit and the capacity is free for the share.
func (c *Core) placeOwn(j *job) bool {
	if !c.ownFit(j) {
		return false
	}
	for _, d := range j.needs() {
		if c.free(j.sh, d.u) < int(d.n) {
			return false
		}
	}
	return true
}

// placeBorrow: a LEND_AND_BORROW share's job that does not fit its own limit
// can borrow the rest within the borrow cap from lendable, free capacity.
func (c *Core) placeBorrow(j *job) bool {
	s := j.sh
	if s.strategy != LendAndBorrow || c.ownFit(j) {
		return false
	}
	for _, d := range j.needs() {
		n := int(d.n)
		part := max(0, n-s.ownIdle(d.u))
		if bc := s.borrowCap(d.u); bc >= 0 && s.borrowedOf(d.u)+part > bc {
			return false
		}
		if part > c.lendableTo(s, d.u) || c.free(s, d.u) < n {
			return false
		}
	}
	return true
}

// envFits: a FIFO queue's job fits the SE's free capacity.
func (c *Core) envFits(j *job) bool {
	e := j.sh.q.env
	for _, d := range j.needs() {
		if e.limit[d.u]-e.use[d.u] < int(d.n) {
			return false
		}
	}
	return true
}

// dispatch places head h on the capacity it now fits.
func (c *Core) dispatch(h *job, via Via, out []Decision) []Decision {
	s := h.sh
	own := c.unitCounts(h, func(d need) int { return min(int(d.n), s.ownIdle(d.u)) })
	bor := c.unitCounts(h, func(d need) int { return max(0, int(d.n)-s.ownIdle(d.u)) })
	if s.strategy == 0 {
		own, bor = c.unitCounts(h, func(d need) int { return int(d.n) }), nil
	}
	c.dequeue(h)
	h.dispatchedAt, h.wakeSet = c.now, false
	c.hold(h)
	for _, b := range bor {
		// More borrowed capacity: heads that need it may now reclaim it.
		c.touch(s.q.env, c.unitIdx[b.Unit])
	}
	return append(out, Decision{Kind: Dispatch, Job: h.id, Handle: h.handle(), Queue: s.q.name, Share: s.name, Own: own, Borrowed: bor, Via: via})
}

// preemptFor preempts victims vs and dispatches h on the capacity they
// held, as one decision: nothing else can take that capacity in between.
func (c *Core) preemptFor(h *job, vs []*job, via Via, out []Decision) []Decision {
	for _, v := range vs {
		out = c.preempt(v, h, out)
	}
	if !c.placeOwn(h) && !c.placeBorrow(h) {
		panic("core: preemption did not make room for " + h.id)
	}
	return c.dispatch(h, via, out)
}

// preempt stops dispatched job v for h: it returns to RUNNABLE at its old
// place, or fails when its preemption retries are exhausted.
func (c *Core) preempt(v, h *job, out []Decision) []Decision {
	vs := v.sh
	d := Decision{Kind: Preempt, Job: v.id, Queue: vs.q.name, Share: vs.name, For: h.id, ForShare: h.sh.name}
	if vs == h.sh {
		d.Preemption, d.Reason = InShare, Reason{Code: ReasonPreemptedInShare, Job: h.id, Share: h.sh.name}
	} else {
		d.Preemption, d.Reason = CrossShare, Reason{Code: ReasonPreemptedCrossShare, Job: h.id, Share: h.sh.name}
	}
	c.release(v)
	v.preempted++
	if v.retries >= 0 && v.preempted > v.retries {
		out = append(out, d, Decision{Kind: Fail, Job: v.id, Queue: vs.q.name, Share: vs.name, Reason: Reason{Code: ReasonRetriesExhausted}})
		c.forget(v)
		return out
	}
	d.Requeued = true
	v.heldAt = c.instant
	c.enqueue(v)
	return append(out, d)
}
