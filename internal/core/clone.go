package core

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
)

// Clone returns a deep copy of the core: the same events and steps applied
// to the copy and to the original give byte-equal decisions, and neither
// sees the other's changes. It only reads the original, so it may run
// alongside the original's other readers. It costs O(live jobs): the
// slabs that hold live jobs are copied whole, and the table of IDs (up
// to 16 bytes for each of the most jobs ever live); the jobs' demands are
// shared (they never change). A handle names the same job in both.
func (c *Core) Clone() *Core { return c.Copy().Core() }

// Copy is a core's copy in two halves: Core.Copy reads the original, and
// Copy.Core finishes it without the original, so that a caller holding a
// lock to read the original may release it in between.
type Copy struct{ c *Core }

// Copy takes the first half of a Clone.
func (c *Core) Copy() *Copy {
	n := &Core{
		envs:    make(map[string]*env, len(c.envs)),
		queues:  make(map[string]*queue, len(c.queues)),
		units:   slices.Clone(c.units),
		unitIdx: maps.Clone(c.unitIdx),
		instant: c.instant, now: c.now,
		pending:   slices.Clone(c.pending),
		reconfigs: c.reconfigs, fairQueues: c.fairQueues,
	}
	// Only slabs that hold live jobs are copied, each whole, so that a
	// queue that drained does not copy the slots of its peak.
	n.slabs = make([]*[jobSlab]job, len(c.slabs))
	n.slabLive = slices.Clone(c.slabLive)
	for i, sl := range c.slabs {
		if c.slabLive[i] > 0 {
			ns := *sl
			n.slabs[i] = &ns
		}
	}
	n.slots = c.slots
	n.ids = c.ids.clone()
	for _, j := range c.freeJobs {
		if n.slabs[j.slot/jobSlab] != nil {
			n.freeJobs = append(n.freeJobs, n.at(j.slot))
		}
	}
	cl := cloner{from: c, to: n, envs: map[*env]*env{}, queues: map[*queue]*queue{}, shares: map[*share]*share{}}
	for _, e := range c.envs {
		cl.env(e)
	}
	for name, q := range c.queues {
		n.queues[name] = cl.queues[q]
	}
	for _, e := range c.envs {
		cl.envLinks(e)
	}
	for _, e := range c.dirtyEnvs {
		if ne := cl.envs[e]; ne != nil { // a deleted one is skipped by Step
			n.dirtyEnvs = append(n.dirtyEnvs, ne)
		}
	}
	for _, w := range c.wakes {
		if n.slabs[w.slot/jobSlab] != nil { // else its job has ended
			w.j = n.at(w.slot)
			n.wakes = append(n.wakes, w)
		}
	}
	heap.Init(&n.wakes) // leaving some out may have broken the order
	for _, j := range c.newInfeas {
		if c.lookup(j.id) == j { // others are skipped when reported
			n.newInfeas = append(n.newInfeas, n.at(j.slot))
		}
	}
	return &Copy{c: n}
}

// EachJob is Core.EachJob on the copy, before it is indexed.
func (x *Copy) EachJob(fn func(LiveJob) bool) { x.c.EachJob(fn) }

// Core returns the copy; call it once.
func (x *Copy) Core() *Core {
	n := x.c
	x.c = nil
	return n
}

// cloner maps the original's environments, queues, shares and jobs to
// their copies.
type cloner struct {
	from   *Core
	to     *Core
	envs   map[*env]*env
	queues map[*queue]*queue
	shares map[*share]*share
}

// env copies an environment with its queues, shares and jobs; the links
// between shares (wait lists, dirty lists) come after, in envLinks.
func (cl *cloner) env(e *env) {
	ne := &env{
		name: e.name, disabled: e.disabled, quota: e.quota, queued: e.queued, minShares: e.minShares,
		limit: slices.Clone(e.limit), use: slices.Clone(e.use), sumLimit: slices.Clone(e.sumLimit),
		lenderLimit: slices.Clone(e.lenderLimit), reserveIdle: slices.Clone(e.reserveIdle),
		lenderIdle: slices.Clone(e.lenderIdle), borrowed: slices.Clone(e.borrowed),
		touched: slices.Clone(e.touched), touchedList: slices.Clone(e.touchedList),
		candidates: make([]int, len(e.candidates)), // counted in envLinks
	}
	cl.envs[e] = ne
	cl.to.envs[e.name] = ne
	for _, q := range e.queues {
		nq := &queue{name: q.name, env: ne, quota: q.quota, prio: q.prio, disabled: q.disabled, fair: q.fair}
		cl.queues[q] = nq
		ne.queues = append(ne.queues, nq)
		for _, s := range q.shares {
			nq.shares = append(nq.shares, cl.share(s, nq))
		}
	}
}

func (cl *cloner) share(s *share, nq *queue) *share {
	ns := &share{
		q: nq, name: s.name, limit: slices.Clone(s.limit), strategy: s.strategy, borrowLimit: s.borrowLimit,
		inShare: s.inShare, disabled: s.disabled, minRuntime: s.minRuntime, use: slices.Clone(s.use),
		dirty: s.dirty, waitKind: s.waitKind, inShareCandidate: s.inShareCandidate,
		waitOn: slices.Clone(s.waitOn), waitPos: slices.Clone(s.waitPos), lastWait: s.lastWait,
		weight: s.weight, usage: s.usage, usageAt: s.usageAt, held: s.held,
	}
	cl.shares[s] = ns
	ns.dispatched = cl.jobSet(&s.dispatched, ns)
	ns.runnable = cl.jobSet(&s.runnable, ns)
	ns.infeasible = cl.jobSet(&s.infeasible, ns)
	if h := s.lastHead; h != nil {
		// The last head reported may have ended since: then a job that is
		// not a live one stands for it, as it is only compared with live
		// heads. A live one is its copy, in the same slot.
		ns.lastHead = &job{id: h.id}
		if cl.from.lookup(h.id) == h {
			ns.lastHead = cl.to.at(h.slot)
		}
	}
	return ns
}

// jobSet copies a share's set, pointing at each job's copy (every live job
// is in one set of its share) and the copy at its share.
func (cl *cloner) jobSet(set *jobSet, ns *share) jobSet {
	out := jobSet{order: set.order, n: set.n, chunks: make([][]*job, len(set.chunks))}
	for i, ch := range set.chunks {
		nc := make([]*job, len(ch), max(len(ch), maxChunk))
		for k, j := range ch {
			nj := cl.to.at(j.slot)
			nj.sh = ns
			nc[k] = nj
		}
		out.chunks[i] = nc
	}
	return out
}

// envLinks copies an environment's wait lists and dirty list. Shares of
// deleted queues may linger in them in the original; they decide nothing
// any more, so the copy leaves them out and renumbers the positions.
func (cl *cloner) envLinks(e *env) {
	ne := cl.envs[e]
	for k := range e.waiting {
		ne.waiting[k] = make([][]*share, len(e.waiting[k]))
		for u, list := range e.waiting[k] {
			var nl []*share
			for _, s := range list {
				ns := cl.shares[s]
				if ns == nil {
					continue
				}
				for i, wu := range ns.waitOn {
					if int(wu) == u {
						ns.waitPos[i] = len(nl)
					}
				}
				if ns.inShareCandidate {
					ne.candidates[u]++
				}
				nl = append(nl, ns)
			}
			ne.waiting[k][u] = nl
		}
	}
	for _, s := range e.dirty {
		if ns := cl.shares[s]; ns != nil {
			ne.dirty = append(ne.dirty, ns)
		}
	}
}

// LiveJob is a live job as EachJob reports it.
type LiveJob struct {
	ID    string
	Env   string // the service environment whose capacity it uses
	Queue string
	Share string // empty in a FIFO queue
	// Dispatched: it holds capacity (SCHEDULED, STARTING or RUNNING).
	Dispatched bool
	// Stuck: a RUNNABLE job that no end of another job can place: it
	// cannot run as configured, or its queue or service environment is
	// DISABLED.
	Stuck bool
}

// EachJob calls fn for every live job until fn returns false: queue by
// queue and share by share (by name), the dispatched jobs first, then the
// RUNNABLE ones in their order, then those that cannot run as configured.
func (c *Core) EachJob(fn func(LiveJob) bool) {
	qs := slices.SortedFunc(maps.Values(c.queues), func(a, b *queue) int { return cmp.Compare(a.name, b.name) })
	for _, q := range qs {
		off := q.disabled || q.env.disabled
		for _, s := range q.shares {
			for _, p := range [...]struct {
				set               *jobSet
				dispatched, stuck bool
			}{{&s.dispatched, true, false}, {&s.runnable, false, off}, {&s.infeasible, false, true}} {
				more := true
				p.set.Each(func(j *job) bool {
					more = fn(LiveJob{ID: j.id, Env: q.env.name, Queue: q.name, Share: s.name, Dispatched: p.dispatched, Stuck: p.stuck})
					return more
				})
				if !more {
					return
				}
			}
		}
	}
}
