package core

import (
	"cmp"
	"slices"
)

// headReason explains why head h was not placed, naming idle capacity it
// cannot use and why.
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
	case s.q.fair != nil:
		return c.fairReason(h)
	}
	if r, ok := c.minRuntimeReason(h); ok {
		return r
	}
	if s.strategy == 0 || c.ownFit(h) {
		for _, d := range h.needs() {
			if free := e.limit[d.u] - e.use[d.u]; s.strategy == 0 && free < int(d.n) {
				return Reason{Code: ReasonCapacity, Unit: c.units[d.u], Need: int(d.n)}
			}
			if s.strategy != 0 && c.free(s, d.u) < int(d.n) {
				return c.reservedReason(Reason{Code: ReasonCapacity, Unit: c.units[d.u], Need: int(d.n), Share: s.name}, s, d.u)
			}
		}
		return Reason{Code: ReasonCapacity, Share: s.name}
	}
	// Beyond its own limit: the share cannot borrow, or may not borrow more,
	// or too little is lendable.
	for _, d := range h.needs() {
		if s.use[d.u]+int(d.n) <= s.limit[d.u] {
			continue
		}
		r := Reason{Code: ReasonAtLimit, Share: s.name, Unit: c.units[d.u], Limit: s.limit[d.u], Need: int(d.n)}
		part := max(0, int(d.n)-s.ownIdle(d.u))
		switch bc := s.borrowCap(d.u); {
		case s.strategy != LendAndBorrow:
			r.Code = ReasonShareFull
			return c.lendableReason(r, s, d.u)
		case bc >= 0 && s.borrowedOf(d.u)+part > bc:
			r.Code, r.BorrowCap = ReasonAtBorrowLimit, bc
			return c.lendableReason(r, s, d.u)
		case part > c.lendableTo(s, d.u):
			r.Lendable = max(0, c.lendableTo(s, d.u))
			return c.reservedReason(r, s, d.u)
		}
	}
	// It could borrow, but the SE capacity is held by others or kept by
	// RESERVE shares.
	for _, d := range h.needs() {
		if c.free(s, d.u) < int(d.n) {
			return c.reservedReason(Reason{Code: ReasonCapacity, Unit: c.units[d.u], Need: int(d.n), Share: s.name}, s, d.u)
		}
	}
	return Reason{Code: ReasonCapacity, Share: s.name}
}

// reservedReason adds to r the free idle capacity of unit u that RESERVE
// shares other than s keep: at most what is free in the SE, named by the
// first such share.
func (c *Core) reservedReason(r Reason, s *share, u int32) Reason {
	e := s.q.env
	n := e.reserveIdle[u]
	if s.strategy == Reserve {
		n -= s.ownIdle(u)
	}
	if r.IdleCount = min(n, e.limit[u]-e.use[u]); r.IdleCount <= 0 {
		r.IdleCount = 0
		return r
	}
	for _, x := range s.q.shares {
		if x != s && x.strategy == Reserve && x.ownIdle(u) > 0 {
			if r.IdleSources++; r.IdleSources == 1 {
				r.IdleFrom = x.name
			}
		}
	}
	return r
}

// lendableReason adds to r the free idle capacity of unit u that others
// could lend s if its strategy or borrow limit let it borrow, named by its
// first source: a lender's unlent idle capacity (by name), then the unlent
// capacity beyond all share limits.
func (c *Core) lendableReason(r Reason, s *share, u int32) Reason {
	e := s.q.env
	if r.IdleCount = min(c.lendableTo(s, u), c.free(s, u)); r.IdleCount <= 0 {
		r.IdleCount = 0
		return r
	}
	lent := map[*share]int{}
	unowned := 0
	for _, src := range sources(s.q, u) {
		if src.s == nil {
			unowned = src.n
		} else {
			lent[src.s] = src.n
		}
	}
	name := func(n string) {
		if r.IdleSources++; r.IdleSources == 1 {
			r.IdleFrom = n
		}
	}
	for _, x := range s.q.shares {
		if x != s && x.lender() && x.ownIdle(u) > lent[x] {
			name(x.name)
		}
	}
	if max(0, e.limit[u]-e.sumLimit[u]) > unowned {
		name("")
	}
	return r
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
	j := c.lookup(id)
	if j == nil {
		return JobStatus{}, false
	}
	st := JobStatus{Queue: j.sh.q.name, Share: j.sh.name, Priority: int(j.prio), Position: -1, Preempted: int(j.preempted)}
	switch j.state {
	case dispatched:
		st.Dispatched = true
	case runnable:
		st.Position = j.sh.runnable.Rank(j)
	case infeasible:
		st.Position = j.sh.runnable.Len() + j.sh.infeasible.Rank(j)
	}
	st.Reason = c.reasonOf(j)
	return st, true
}

// WaitReason says why a live job waits; ok is false for a job that is
// dispatched, ended or unknown. It is Job's Reason without the position,
// whose count costs more than the rest (a describe needs only the reason).
func (c *Core) WaitReason(id string) (Reason, bool) {
	j := c.lookup(id)
	if j == nil || j.state == dispatched {
		return Reason{}, false
	}
	return c.reasonOf(j), true
}

// reasonOf is why job j waits; none for a dispatched job.
func (c *Core) reasonOf(j *job) Reason {
	switch j.state {
	case runnable:
		return c.waitReason(j)
	case infeasible:
		return c.infeasibleReason(j)
	}
	return Reason{}
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
	var s *share
	if q.quota || q.fair != nil {
		s = q.share(shareName)
	} else {
		s = q.shares[0]
	}
	if s == nil {
		return nil
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
	if q.fair != nil {
		return fairFront(q, n)
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
	// BorrowedFrom splits Borrowed by whose capacity it stands on, and
	// LentTo splits Lent by borrower; by share name, the capacity beyond all
	// share limits ("") last. See provenance.go for the attribution.
	BorrowedFrom []ShareCount
	LentTo       []ShareCount
}

// ShareUsage is a share's standing on every unit it has a limit for or uses.
type ShareUsage struct {
	Share    string
	Strategy Strategy
	Units    []UnitUsage
}

// Usage reports a queue's shares (for a FIFO queue, one unnamed share).
// Borrowed capacity is attributed as Holdings attributes it.
func (c *Core) Usage(queue string) []ShareUsage {
	q := c.queues[queue]
	if q == nil {
		return nil
	}
	type key struct {
		s *share
		u int32
	}
	from, to := map[key][]ShareCount{}, map[key][]ShareCount{}
	lent := map[key]int{}
	if q.quota {
		for u := range c.units {
			if q.env.borrowed[u] == 0 {
				continue
			}
			matchLoans(q, int32(u), func(j *job, src source, n int) {
				b := key{j.sh, int32(u)}
				from[b] = addShareCount(from[b], src.name(), n, src.reclaim)
				if src.s != nil {
					l := key{src.s, int32(u)}
					to[l] = addShareCount(to[l], j.sh.name, n, false)
					lent[l] += n
				}
			})
		}
	}
	byName := func(a, b ShareCount) int { return lenderCmp(a.Share, b.Share) }
	var out []ShareUsage
	for _, s := range q.shares {
		su := ShareUsage{Share: s.name, Strategy: s.strategy}
		for u := range c.units {
			if s.limit[u] == 0 && s.use[u] == 0 {
				continue
			}
			k := key{s, int32(u)}
			uu := UnitUsage{Unit: c.units[u], Limit: s.limit[u], Used: s.use[u], BorrowedFrom: from[k], LentTo: to[k]}
			uu.Own = min(s.use[u], s.limit[u])
			uu.Borrowed = s.borrowedOf(int32(u))
			if s.strategy == 0 {
				// A FIFO queue has no quota: all it uses is its own.
				uu.Own, uu.Borrowed = s.use[u], 0
			}
			uu.Lent = lent[k]
			uu.Idle = s.ownIdle(int32(u)) - uu.Lent
			slices.SortFunc(uu.BorrowedFrom, byName)
			slices.SortFunc(uu.LentTo, byName)
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
func (c *Core) Len() int { return c.ids.n }
