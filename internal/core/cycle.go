package core

import (
	"slices"
	"strings"
	"time"
)

// Step runs one scheduling cycle at time now over every pool that changed
// since the last Step, and returns what it decided (spec 2.3). A job
// preempted at an instant stays held back, blocking its share, until a
// Step at a later instant: the engine runs one cycle per instant, and a
// second Step at the same instant cannot undo what the first decided.
//
// The decisions are written into buffers that the next Step reuses: a
// caller that keeps them past that copies them.
func (c *Core) Step(now time.Time) Decisions {
	if t := now.UnixNano(); t != c.now || c.instant == 0 {
		c.now = t
		c.instant++
	}
	c.expireProtections()
	c.unitOut = c.unitOut[:0]
	ds := Decisions{List: c.out[:0]}
	defer func() {
		// This cycle's decisions overwrote the last one's; those beyond
		// them would keep what they refer to alive.
		if n := len(ds.List); n < len(c.out) {
			clear(c.out[n:])
		}
		// A rare large cycle's buffers are not kept for the small ones.
		c.out = ds.List
		if cap(c.out) > keptDecisions {
			c.out, c.unitOut = nil, nil
		}
	}()
	ds.List = append(ds.List, c.pending...)
	c.pending = c.pending[:0]
	ds.List = append(ds.List, c.reportInfeasible()...)
	c.accrueFair()
	defer c.snapshotFair()

	// Envs marked while this cycle runs wait for the next in the list of
	// the last Step's pools, and this Step's pools are kept for Heads.
	envs := c.dirtyEnvs
	clear(c.stepped)
	c.dirtyEnvs, c.stepped = c.stepped[:0], envs
	slices.SortFunc(envs, func(a, b *env) int { return strings.Compare(a.name, b.name) })
	for _, e := range envs {
		e.queued = false
		if c.envs[e.name] != e {
			continue // deleted
		}
		ds.List = c.runPool(e, ds.List)
	}
	return ds
}

// keptDecisions bounds the output buffer that Step keeps for the next one.
const keptDecisions = 4096

// reportInfeasible reports jobs that became infeasible since the last Step
// and still are.
func (c *Core) reportInfeasible() []Decision {
	js := c.newInfeas
	if len(js) == 0 {
		return nil
	}
	c.newInfeas = nil
	slices.SortFunc(js, func(a, b *job) int { return strings.Compare(a.id, b.id) })
	var out []Decision
	for i, j := range js {
		if j.state != infeasible || (i > 0 && js[i-1] == j) || c.lookup(j.id) != j {
			continue
		}
		out = append(out, Decision{Kind: Wait, Job: j.id, Queue: j.sh.q.name, Share: j.sh.name, Reason: c.infeasibleReason(j)})
	}
	return out
}

// runPool repeats the four passes over the pool's dirty heads until a round
// changes nothing, then reports the reasons of the heads that still wait.
func (c *Core) runPool(e *env, out []Decision) []Decision {
	fq := e.fairQueue()
	if fq != nil {
		// Every identifier's standing moves with the others': all are
		// looked at, and all their reasons reported when they change.
		c.markPool(e)
	}
	if c.poolOpen(e) {
		for {
			var changed bool
			if fq != nil {
				out, changed = c.fairRound(fq, out)
			} else if e.quota {
				out, changed = c.quotaRound(e, out)
			} else {
				out, changed = c.fifoRound(e, out)
			}
			if !changed {
				break
			}
		}
	}
	return c.settle(e, out)
}

// poolOpen tells whether anything new may be placed in the pool.
func (c *Core) poolOpen(e *env) bool {
	return !e.disabled && len(e.queues) > 0
}

// heads returns the dirty shares' heads that may be placed in this cycle.
func (c *Core) heads(e *env) []*job {
	hs := c.bufs[0][:0]
	defer func() { c.bufs[0] = hs }()
	for _, s := range e.dirty {
		if s.q.disabled {
			continue
		}
		if h := s.head(); h != nil && h.heldAt != c.instant {
			hs = append(hs, h)
		}
	}
	return hs
}

// quotaRound runs passes 1-4 once, stopping at the first pass that changes
// anything.
func (c *Core) quotaRound(e *env, out []Decision) ([]Decision, bool) {
	// 1. Own capacity: shares furthest below their limits first.
	c.wake(e, 1)
	hs := c.heads(e)
	own := c.bufs[1][:0]
	defer func() { c.bufs[1] = own }()
	for _, h := range hs {
		if c.ownFit(h) {
			own = append(own, h)
		}
	}
	slices.SortFunc(own, c.ratioCmp)
	changed := false
	for _, h := range own {
		if c.isHead(h) && c.placeOwn(h) {
			out = c.dispatch(h, ViaIdle, out)
			changed = true
		}
	}
	if changed {
		return out, true
	}
	// 2. Reclaim lent capacity (cross-share preemption).
	for _, h := range own {
		if vs, ok := c.reclaimVictims(h); ok {
			return c.preemptFor(h, vs, ViaReclaim, out), true
		}
	}
	// 3. Borrow idle capacity, FIFO.
	c.wake(e, 3)
	hs = c.heads(e)
	bor := c.bufs[2][:0]
	defer func() { c.bufs[2] = bor }()
	for _, h := range hs {
		if c.placeBorrow(h) {
			bor = append(bor, h)
		}
	}
	slices.SortFunc(bor, fifoCmp)
	for _, h := range bor {
		if c.isHead(h) && c.placeBorrow(h) {
			out = c.dispatch(h, ViaIdle, out)
			changed = true
		}
	}
	if changed {
		return out, true
	}
	// 4. In-share preemption.
	c.wake(e, 4)
	hs = c.heads(e)
	ins := c.bufs[3][:0]
	defer func() { c.bufs[3] = ins }()
	for _, h := range hs {
		if h.sh.inShare {
			ins = append(ins, h)
		}
	}
	slices.SortFunc(ins, prioCmp)
	for _, h := range ins {
		if vs, ok := c.inShareVictims(h); ok {
			return c.preemptFor(h, vs, ViaInShare, out), true
		}
	}
	return out, false
}

// fifoRound dispatches FIFO queue heads in order of queue priority, then
// queue time, while the environment has room.
func (c *Core) fifoRound(e *env, out []Decision) ([]Decision, bool) {
	c.wake(e, 1)
	hs := c.heads(e)
	slices.SortFunc(hs, func(a, b *job) int {
		if a.sh.q.prio != b.sh.q.prio {
			return b.sh.q.prio - a.sh.q.prio
		}
		return fifoCmp(a, b)
	})
	changed := false
	for _, h := range hs {
		if c.isHead(h) && c.envFits(h) {
			out = c.dispatch(h, ViaIdle, out)
			changed = true
		}
	}
	return out, changed
}

func (c *Core) isHead(j *job) bool {
	return j.state == runnable && j.sh.head() == j && j.heldAt != c.instant
}

// settle ends a pool's cycle: every dirty share becomes clean except those
// whose head was preempted in this cycle, and heads whose waiting reason
// changed are reported.
func (c *Core) settle(e *env, out []Decision) []Decision {
	// Swap the dirty list with a spare, so settling allocates nothing.
	dirty := e.dirty
	e.dirty, e.spare = e.spare[:0], nil
	defer func() { clear(dirty); e.spare = dirty[:0] }()
	e.untouch()
	slices.SortFunc(dirty, shareCmp)
	for _, s := range dirty {
		s.dirty = false
		h := s.head()
		if h != nil && h.heldAt == c.instant && c.poolOpen(e) && !s.q.disabled {
			// Marked, its pool runs at the next Step, where the head's
			// reason stops being ReasonHeldBack (Heads relies on it).
			c.markShare(s)
			continue
		}
		c.register(s, h)
		if h == nil {
			s.lastHead = nil
			continue
		}
		r := c.headReason(h)
		if h != s.lastHead || r != s.lastWait {
			s.lastHead, s.lastWait = h, r
			out = append(out, Decision{Kind: Wait, Job: h.id, Queue: s.q.name, Share: s.name, Reason: r})
		}
	}
	return out
}

// fifoCmp: 1) queue time, 2) job ID.
func fifoCmp(a, b *job) int {
	if a.queuedAt != b.queuedAt {
		if a.queuedAt < b.queuedAt {
			return -1
		}
		return 1
	}
	if a.idKey != b.idKey {
		if a.idKey < b.idKey {
			return -1
		}
		return 1
	}
	return strings.Compare(a.id, b.id)
}

// prioCmp: 1) priority desc, 2) queue time, 3) job ID.
func prioCmp(a, b *job) int {
	if a.prio != b.prio {
		return int(b.prio - a.prio)
	}
	return fifoCmp(a, b)
}

// ratioCmp orders pass 1: 1) the share's use/limit ratio over the units the
// head needs, ascending, 2) priority desc, 3) queue time, 4) job ID.
func (c *Core) ratioCmp(a, b *job) int {
	an, ad := ratio(a)
	bn, bd := ratio(b)
	if x, y := an*bd, bn*ad; x != y {
		if x < y {
			return -1
		}
		return 1
	}
	return prioCmp(a, b)
}

// ratio is max over the job's units of use/limit, as a fraction. Only
// called for jobs that fit their own limit, so limits are positive.
func ratio(j *job) (num, den int64) {
	num, den = 0, 1
	for _, d := range j.needs() {
		n, l := int64(j.sh.use[d.u]), int64(j.sh.limit[d.u])
		if n*den > num*l {
			num, den = n, l
		}
	}
	return num, den
}
