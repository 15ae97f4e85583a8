package core

import (
	"cmp"
	"slices"
)

// headReason explains why head h was not placed.
func (c *Core) headReason(h *job) Reason {
	s := h.sh
	e := s.q.env
	switch {
	case e.disabled:
		return Reason{Code: ReasonEnvDisabled}
	case s.q.disabled:
		return Reason{Code: ReasonQueueDisabled}
	case h.heldAt == c.instant:
		return Reason{Code: ReasonHeldBack}
	}
	if s.strategy == 0 || c.ownFit(h) {
		for _, d := range h.demand {
			if free := e.limit[d.u] - e.use[d.u]; s.strategy == 0 && free < int(d.n) || s.strategy != 0 && c.free(s, d.u) < int(d.n) {
				return Reason{Code: ReasonCapacity, Unit: c.units[d.u], Need: int(d.n), Share: s.name}
			}
		}
		return Reason{Code: ReasonCapacity, Share: s.name}
	}
	// Beyond its own limit: the share cannot borrow, or may not borrow more,
	// or too little is lendable.
	for _, d := range h.demand {
		if s.use[d.u]+int(d.n) <= s.limit[d.u] {
			continue
		}
		r := Reason{Code: ReasonAtLimit, Share: s.name, Unit: c.units[d.u], Limit: s.limit[d.u], Need: int(d.n)}
		part := max(0, int(d.n)-s.ownIdle(d.u))
		switch bc := s.borrowCap(d.u); {
		case s.strategy != LendAndBorrow:
			r.Code = ReasonShareFull
			return r
		case bc >= 0 && s.borrowedOf(d.u)+part > bc:
			r.Code = ReasonAtBorrowLimit
			return r
		case part > c.lendableTo(s, d.u):
			return r
		}
	}
	// It could borrow, but the SE capacity is held by others or kept by
	// RESERVE shares.
	for _, d := range h.demand {
		if c.free(s, d.u) < int(d.n) {
			return Reason{Code: ReasonCapacity, Unit: c.units[d.u], Need: int(d.n), Share: s.name}
		}
	}
	return Reason{Code: ReasonCapacity, Share: s.name}
}

// JobStatus is what the core knows of a live job.
type JobStatus struct {
	Dispatched bool
	Queue      string
	Share      string
	Priority   int
	// Position is the job's 0-based place in its share's RUNNABLE order
	// (feasible jobs first); -1 when dispatched.
	Position int
	Reason   Reason // why a RUNNABLE job waits
	// Preempted counts the job's preemptions so far.
	Preempted int
}

// Job returns a live job's status; ok is false for unknown or ended jobs.
func (c *Core) Job(id string) (JobStatus, bool) {
	j := c.jobs[id]
	if j == nil {
		return JobStatus{}, false
	}
	st := JobStatus{Queue: j.sh.q.name, Share: j.sh.name, Priority: int(j.prio), Position: -1, Preempted: int(j.preempted)}
	switch j.state {
	case dispatched:
		st.Dispatched = true
	case runnable:
		st.Position = j.sh.runnable.Rank(j)
		st.Reason = c.waitReason(j)
	case infeasible:
		st.Position = j.sh.runnable.Len() + j.sh.infeasible.Rank(j)
		st.Reason = Reason{Code: j.why}
	}
	return st, true
}

// waitReason explains why RUNNABLE job j waits.
func (c *Core) waitReason(j *job) Reason {
	if h := j.sh.head(); h != j {
		return Reason{Code: ReasonBlocked, Job: h.id, Share: j.sh.name}
	}
	return c.headReason(j)
}

// ShareFront returns up to n RUNNABLE jobs of a share in dispatch order
// (feasible ones, then infeasible ones).
func (c *Core) ShareFront(queue, shareName string, n int) []string {
	q := c.queues[queue]
	if q == nil {
		return nil
	}
	s := q.shares[0]
	if q.quota {
		if s = q.share(shareName); s == nil {
			return nil
		}
	}
	var out []string
	for _, set := range []*jobSet{&s.runnable, &s.infeasible} {
		set.Each(func(j *job) bool {
			if len(out) >= n {
				return false
			}
			out = append(out, j.id)
			return true
		})
	}
	return out
}

// QueueFront returns up to n feasible RUNNABLE jobs of a queue in predicted
// dispatch order: 1) priority desc, 2) the share's use/limit ratio asc,
// 3) queue time, 4) job ID (a k-way merge over the shares' orders).
func (c *Core) QueueFront(queue string, n int) []string {
	q := c.queues[queue]
	if q == nil {
		return nil
	}
	type cursor struct {
		s   *share
		i   int
		j   *job
		num int64
		den int64
	}
	var cs []*cursor
	for _, s := range q.shares {
		if j := s.runnable.At(0); j != nil {
			num, den := shareRatio(s)
			cs = append(cs, &cursor{s: s, j: j, num: num, den: den})
		}
	}
	less := func(a, b *cursor) int {
		if a.j.prio != b.j.prio {
			return int(b.j.prio - a.j.prio)
		}
		if x, y := a.num*b.den, b.num*a.den; x != y {
			return cmp.Compare(x, y)
		}
		return fifoCmp(a.j, b.j)
	}
	var out []string
	for len(out) < n && len(cs) > 0 {
		best := 0
		for i := range cs {
			if less(cs[i], cs[best]) < 0 {
				best = i
			}
		}
		cur := cs[best]
		out = append(out, cur.j.id)
		cur.i++
		if cur.j = cur.s.runnable.At(cur.i); cur.j == nil {
			cs = slices.Delete(cs, best, best+1)
		}
	}
	return out
}

// shareRatio is the share's largest use/limit over its limited units.
func shareRatio(s *share) (num, den int64) {
	num, den = 0, 1
	for u, l := range s.limit {
		if l > 0 && int64(s.use[u])*den > num*int64(l) {
			num, den = int64(s.use[u]), int64(l)
		}
	}
	return num, den
}

// UnitUsage is one share's standing on one unit.
type UnitUsage struct {
	Unit     string
	Limit    int
	Used     int // held by the share's dispatched jobs
	Own      int // the part of Used within the limit
	Borrowed int // the part of Used beyond the limit
	Lent     int // the share's idle capacity used by borrowers
	Idle     int // the share's idle capacity nobody uses
}

// ShareUsage is a share's standing on every unit it has a limit for or uses.
type ShareUsage struct {
	Share    string
	Strategy Strategy
	Units    []UnitUsage
}

// Usage reports a queue's shares (for a FIFO queue, one unnamed share).
// Borrowed capacity is attributed first to SE capacity beyond the share
// limits, then to lending shares in name order.
func (c *Core) Usage(queue string) []ShareUsage {
	q := c.queues[queue]
	if q == nil {
		return nil
	}
	e := q.env
	lentLeft := make([]int, len(c.units))
	for u := range lentLeft {
		lentLeft[u] = max(0, e.borrowed[u]-max(0, e.limit[u]-e.sumLimit[u]))
	}
	var out []ShareUsage
	for _, s := range q.shares {
		su := ShareUsage{Share: s.name, Strategy: s.strategy}
		for u := range c.units {
			if s.limit[u] == 0 && s.use[u] == 0 {
				continue
			}
			uu := UnitUsage{Unit: c.units[u], Limit: s.limit[u], Used: s.use[u]}
			uu.Own = min(s.use[u], s.limit[u])
			uu.Borrowed = s.borrowedOf(int32(u))
			if s.strategy == 0 {
				// A FIFO queue has no quota: all it uses is its own.
				uu.Own, uu.Borrowed = s.use[u], 0
			}
			idle := s.ownIdle(int32(u))
			if s.lender() {
				uu.Lent = min(idle, lentLeft[u])
				lentLeft[u] -= uu.Lent
			}
			uu.Idle = idle - uu.Lent
			su.Units = append(su.Units, uu)
		}
		slices.SortFunc(su.Units, func(a, b UnitUsage) int { return cmp.Compare(a.Unit, b.Unit) })
		out = append(out, su)
	}
	return out
}

// EnvUsage reports a service environment's limit and use per unit.
func (c *Core) EnvUsage(name string) []UnitUsage {
	e := c.envs[name]
	if e == nil {
		return nil
	}
	var out []UnitUsage
	for u, n := range c.units {
		if e.limit[u] == 0 && e.use[u] == 0 {
			continue
		}
		out = append(out, UnitUsage{Unit: n, Limit: e.limit[u], Used: e.use[u], Idle: max(0, e.limit[u]-e.use[u])})
	}
	slices.SortFunc(out, func(a, b UnitUsage) int { return cmp.Compare(a.Unit, b.Unit) })
	return out
}

// Len returns how many live jobs the core holds.
func (c *Core) Len() int { return len(c.jobs) }
