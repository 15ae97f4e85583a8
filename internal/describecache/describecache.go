// Package describecache serves describes of service jobs without the
// engine's lock. A job read under the lock is kept, as a copy with where it
// waits, until a cycle changes it; a waiting job's reason is then made from
// its share's head, which every cycle publishes for the pools it may have
// changed. A cycle publishes under the engine's write lock, and a describe
// that overlaps the publishing is refused (the engine then takes the lock),
// so a describe never mixes two cycles.
package describecache

import (
	"sync"
	"sync/atomic"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

// DefaultLimit bounds the jobs kept: the cycle that finds this many drops
// them all, and the jobs described since are kept again as they are read.
// Describes that keep jobs at the same moment may pass it by a few.
const DefaultLimit = 1 << 16

// Cache holds the kept jobs and the heads of their shares. Describe is safe
// for concurrent use without any lock; the other methods are called under
// the engine's lock, as each says. A nil Cache keeps nothing: an engine
// that keeps no job records has none.
type Cache struct {
	gen      atomic.Uint64 // odd while a cycle publishes
	jobs     sync.Map      // job ID → *kept
	n        atomic.Int64  // entries in jobs
	wanted   atomic.Bool   // a describe found no heads to keep a job with
	headless atomic.Int64  // kept waiting jobs found without a head: none, unless a cycle left a head out

	// Under the engine's lock:
	limit     int64                 // written under its write lock
	heads     map[headKey]*headSlot // nil until the first publishing
	reconfigs uint64                // the core's count when last published
}

// New returns an empty cache that keeps at most limit jobs (DefaultLimit
// when limit <= 0).
func New(limit int64) *Cache {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Cache{limit: limit}
}

type headKey struct{ queue, share string }

// headSlot holds a share's head as of the last cycle that changed its pool.
type headSlot struct{ atomic.Pointer[core.Head] }

// kept is a job as last read under the lock.
type kept struct {
	job     record.Job // detached: never changed after it is kept
	waiting bool       // RUNNABLE, and the core has it waiting
	place   core.Place
	head    *headSlot // its share's, when waiting
}

// Describe returns a kept job as clients see it; ok is false when the job
// is not kept or a cycle publishes meanwhile.
func (c *Cache) Describe(id string) (record.Job, bool) {
	if c == nil {
		return record.Job{}, false
	}
	g := c.gen.Load()
	if g&1 == 1 {
		return record.Job{}, false
	}
	v, ok := c.jobs.Load(id)
	if !ok {
		return record.Job{}, false
	}
	k := v.(*kept)
	var h *core.Head
	if k.waiting {
		h = k.head.Load()
	}
	if c.gen.Load() != g {
		return record.Job{}, false
	}
	j := record.Detached(&k.job)
	if k.waiting {
		reason, ok := k.reason(h)
		if !ok {
			c.headless.Add(1)
			return record.Job{}, false
		}
		j.StatusReason = reason.String()
	}
	return j, true
}

// reason is why the job waits, given its share's head, as Core.WaitReason
// gives it.
func (k *kept) reason(h *core.Head) (core.Reason, bool) {
	switch {
	case k.place.Infeasible.Code != core.ReasonNone:
		return k.place.Infeasible, true
	case h == nil || h.Job == "":
		return core.Reason{}, false // a waiting job's share has a head: see Cache.headless
	case h.Job == k.job.JobID:
		return h.Reason, true
	}
	return core.Reason{Code: core.ReasonBlocked, Job: h.Job, Share: k.place.Share}, true
}

// Keep keeps job j, live in cr, as read under the engine's read lock.
func (c *Cache) Keep(j *record.Job, cr *core.Core) {
	if c == nil || c.n.Load() >= c.limit {
		return
	}
	if c.heads == nil {
		c.wanted.Store(true) // the next cycle publishes them
		return
	}
	k := &kept{job: record.Detached(j)}
	if j.Status == record.StatusRunnable {
		if p, ok := cr.WaitPlace(j.JobID); ok {
			k.waiting, k.place = true, p
			if k.head = c.heads[headKey{p.Queue, p.Share}]; k.head == nil {
				return
			}
		}
	}
	if _, loaded := c.jobs.Swap(j.JobID, k); !loaded {
		c.n.Add(1)
	}
}

// Publish ends a cycle, under the engine's write lock: the jobs it changed
// are no longer kept, and the heads of the pools it may have changed in cr
// are published. A configuration change may change where any job waits,
// so it drops every kept job. While no job is kept and no describe asked
// for heads, none are published, and the next publishing gives them all.
func (c *Cache) Publish(cr *core.Core, changed map[string]*record.Job) {
	if c == nil {
		return
	}
	c.gen.Add(1)
	defer c.gen.Add(1)
	if n := cr.Reconfigurations(); n != c.reconfigs {
		c.reconfigs = n
		c.forgetAll()
	} else if c.n.Load() >= c.limit {
		c.forgetJobs()
	} else if c.n.Load() > 0 {
		for id := range changed {
			c.Forget(id)
		}
	}
	if c.n.Load() == 0 && !c.wanted.Swap(false) {
		c.heads = nil
		return
	}
	all := c.heads == nil
	if all {
		c.heads = map[headKey]*headSlot{}
	}
	cr.Heads(!all, func(h core.Head) {
		k := headKey{h.Queue, h.Share}
		slot := c.heads[k]
		if slot == nil {
			slot = &headSlot{}
			c.heads[k] = slot
		}
		if old := slot.Load(); old == nil || *old != h {
			slot.Store(&h)
		}
	})
}

// Forget drops a kept job, under the engine's write lock.
func (c *Cache) Forget(id string) {
	if c == nil {
		return
	}
	if _, loaded := c.jobs.LoadAndDelete(id); loaded {
		c.n.Add(-1)
	}
}

// Reset drops everything kept when the engine's state is rebuilt, under
// its write lock; a describe that overlaps it is refused. No job is kept
// again before the next publishing, which finds no heads and gives them
// all.
func (c *Cache) Reset() {
	if c == nil {
		return
	}
	c.gen.Add(1)
	c.forgetAll()
	c.gen.Add(1)
}

// SetLimit changes how many jobs are kept, under the engine's write lock.
func (c *Cache) SetLimit(limit int64) { c.limit = limit }

// Kept is how many jobs are kept.
func (c *Cache) Kept() int64 { return c.n.Load() }

// Headless counts the describes that found a kept waiting job whose share
// had no head published: a cycle left the head out.
func (c *Cache) Headless() int64 { return c.headless.Load() }

// forgetJobs drops every kept job, under the engine's write lock.
func (c *Cache) forgetJobs() {
	c.jobs.Clear()
	c.n.Store(0)
}

// forgetAll drops every kept job and head, under the engine's write lock.
func (c *Cache) forgetAll() {
	c.forgetJobs()
	c.heads = nil
}
