package core

import (
	"cmp"
)

// adjust changes share s's use of unit u by delta, keeping the pool's
// aggregates (idle, lendable, borrowed) in step.
func (s *share) adjust(u int32, delta int) {
	e := s.q.env
	idle, bor := s.ownIdle(u), s.borrowedOf(u)
	s.use[u] += delta
	e.use[u] += delta
	if s.strategy == 0 {
		return
	}
	dIdle, dBor := s.ownIdle(u)-idle, s.borrowedOf(u)-bor
	if s.strategy == Reserve {
		e.reserveIdle[u] += dIdle
	} else {
		e.lenderIdle[u] += dIdle
	}
	e.borrowed[u] += dBor
}

// hold makes j dispatched, charging its demand to its share.
func (c *Core) hold(j *job) {
	j.state = dispatched
	j.sh.dispatched.Insert(j)
	for _, d := range j.needs() {
		j.sh.adjust(d.u, int(d.n))
	}
}

// release frees what dispatched job j holds. Heads waiting for those units
// may now move.
func (c *Core) release(j *job) {
	s := j.sh
	s.dispatched.Delete(j)
	for _, d := range j.needs() {
		s.adjust(d.u, -int(d.n))
		c.touch(s.q.env, d.u)
	}
	c.markShare(s)
	j.state = 0
}

// enqueue makes j RUNNABLE in its share (or infeasible, set aside).
func (c *Core) enqueue(j *job) {
	s := j.sh
	if why := c.infeasibility(s, j); why != ReasonNone {
		j.state, j.why, j.whyLimit = infeasible, why, 0
		if why == ReasonEnvMaxResource {
			if d, ok := c.envShortfall(j); ok {
				j.whyLimit = int32(s.q.env.limit[d.u])
			}
		}
		s.infeasible.Insert(j)
		c.newInfeas = append(c.newInfeas, j)
		return
	}
	j.state, j.why = runnable, ReasonNone
	old := s.head()
	s.runnable.Insert(j)
	if old == nil || s.runnable.less(j, old) {
		c.markShare(s)
	}
}

// dequeue takes RUNNABLE j out of its share's order.
func (c *Core) dequeue(j *job) {
	s := j.sh
	if s.head() == j {
		c.markShare(s)
	}
	s.runnable.Delete(j)
	j.state = 0
}

// infeasibility tells why job j can never be placed in share s as the pool
// is configured, or ReasonNone (spec 1.1 and 2.2).
func (c *Core) infeasibility(s *share, j *job) ReasonCode {
	e := s.q.env
	for _, d := range j.needs() {
		if int(d.n) > e.limit[d.u] {
			return ReasonEnvMaxResource
		}
	}
	if s.strategy == 0 {
		return ReasonNone
	}
	for _, d := range j.needs() {
		n, lim := int(d.n), s.limit[d.u]
		if n <= lim {
			continue
		}
		if s.strategy != LendAndBorrow {
			return ReasonShareLimit
		}
		if bc := s.borrowCap(d.u); bc >= 0 && n > lim+bc {
			return ReasonShareBorrowLimit
		}
		if n-lim > c.maxBorrowable(s, d.u) {
			return ReasonBorrowable
		}
	}
	return ReasonNone
}

// envShortfall is the first need of j (by unit name) beyond its
// environment's limit.
func (c *Core) envShortfall(j *job) (need, bool) {
	e := j.sh.q.env
	for _, d := range j.needs() {
		if int(d.n) > e.limit[d.u] {
			return d, true
		}
	}
	return need{}, false
}

// envLimitChanged tells whether the limit that infeasible j was reported
// against has changed, so that its reason is reported anew.
func (c *Core) envLimitChanged(j *job) bool {
	d, ok := c.envShortfall(j)
	return ok && int32(j.sh.q.env.limit[d.u]) != j.whyLimit
}

// infeasibleReason is why infeasible j can never run, with what the
// environment lacks.
func (c *Core) infeasibleReason(j *job) Reason {
	r := Reason{Code: j.why}
	if j.why != ReasonEnvMaxResource {
		return r
	}
	if d, ok := c.envShortfall(j); ok {
		e := j.sh.q.env
		r.Env, r.Unit, r.Need, r.Limit = e.name, c.units[d.u], int(d.n), e.limit[d.u]
	}
	return r
}

// maxBorrowable is the most of u that other shares could ever lend to s:
// their limits if they lend, plus SE capacity beyond all share limits.
func (c *Core) maxBorrowable(s *share, u int32) int {
	e := s.q.env
	n := e.lenderLimit[u] + max(0, e.limit[u]-e.sumLimit[u])
	if s.lender() {
		n -= s.limit[u]
	}
	return n
}

// reconfigure recomputes a pool's aggregates after a configuration change,
// re-checks which of its jobs are feasible and marks every share dirty.
func (c *Core) reconfigure(e *env) {
	c.reconfigs++
	for _, p := range [][]int{e.use, e.sumLimit, e.lenderLimit, e.reserveIdle, e.lenderIdle, e.borrowed} {
		clear(p)
	}
	e.minShares = 0
	for _, q := range e.queues {
		for _, s := range q.shares {
			c.sumShare(e, s)
			if s.minRuntime > 0 {
				e.minShares++
			}
		}
	}
	for _, q := range e.queues {
		for _, s := range q.shares {
			c.recheckFeasible(s)
		}
	}
	c.markPool(e)
}

func (c *Core) sumShare(e *env, s *share) {
	for u := range s.use {
		lim, use := s.limit[u], s.use[u]
		e.use[u] += use
		if s.strategy == 0 {
			continue
		}
		e.sumLimit[u] += lim
		idle := max(0, lim-use)
		if s.lender() {
			e.lenderLimit[u] += lim
			e.lenderIdle[u] += idle
		} else {
			e.reserveIdle[u] += idle
		}
		e.borrowed[u] += max(0, use-lim)
	}
}

// recheckFeasible moves jobs between a share's runnable and infeasible sets
// after the configuration changed.
func (c *Core) recheckFeasible(s *share) {
	var moves []*job
	collect := func(j *job) bool {
		if (c.infeasibility(s, j) == ReasonNone) != (j.state == runnable) || (j.state == infeasible && c.infeasibility(s, j) != j.why) ||
			(j.state == infeasible && j.why == ReasonEnvMaxResource && c.envLimitChanged(j)) {
			moves = append(moves, j)
		}
		return true
	}
	s.runnable.Each(collect)
	s.infeasible.Each(collect)
	for _, j := range moves {
		if j.state == runnable {
			s.runnable.Delete(j)
		} else {
			s.infeasible.Delete(j)
		}
		c.enqueue(j)
	}
}

// markShare notes that share s's head may be able to move.
func (c *Core) markShare(s *share) {
	if s.dirty {
		return
	}
	s.dirty = true
	e := s.q.env
	e.dirty = append(e.dirty, s)
	if !e.queued {
		e.queued = true
		c.dirtyEnvs = append(c.dirtyEnvs, e)
	}
}

func (c *Core) markPool(e *env) {
	for _, q := range e.queues {
		for _, s := range q.shares {
			c.markShare(s)
		}
	}
}

// unitCounts renders per-unit amounts of a job as UnitCounts, skipping
// zeros, in the job's demand order (unit name). The list is part of the
// cycle's output buffer (see Step).
func (c *Core) unitCounts(j *job, amount func(need) int) []UnitCount {
	start := len(c.unitOut)
	for _, d := range j.needs() {
		if n := amount(d); n > 0 {
			c.unitOut = append(c.unitOut, UnitCount{Unit: c.units[d.u], Count: n})
		}
	}
	if len(c.unitOut) == start {
		return nil
	}
	return c.unitOut[start:len(c.unitOut):len(c.unitOut)]
}

func shareCmp(a, b *share) int {
	return cmp.Or(cmp.Compare(a.q.name, b.q.name), cmp.Compare(a.name, b.name))
}
