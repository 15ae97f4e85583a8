package engine

import (
	"sync"
	"sync/atomic"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

// reads serves DescribeServiceJob without the engine's lock. A job read
// under the lock is kept, as a copy with where it waits, until a cycle
// changes it; a waiting job's reason is then made from its share's head,
// which every cycle publishes for the pools it may have changed. A cycle
// publishes under its write lock, and a read that overlaps the publishing
// takes the lock instead, so a read never mixes two cycles.
type reads struct {
	on    bool  // off in an ephemeral engine, whose cycles do not list changed jobs
	limit int64 // keptReads, or less in tests

	gen      atomic.Uint64 // odd while a cycle publishes
	jobs     sync.Map      // job ID → *readJob
	n        atomic.Int64  // entries in jobs
	wanted   atomic.Bool   // a describe found no heads to keep a job with
	headless atomic.Int64  // kept waiting jobs found without a head: none, unless a cycle left a head out

	// Under the engine's lock:
	heads     map[headKey]*headSlot // nil until the first publishing
	reconfigs uint64                // the core's count when last published
}

// keptReads bounds the jobs kept: the cycle that finds this many drops
// them all, and the jobs read since are kept again as they are read.
// Describes that keep jobs at the same moment may pass it by a few.
const keptReads = 1 << 16

type headKey struct{ queue, share string }

// headSlot holds a share's head as of the last cycle that changed its pool.
type headSlot struct{ atomic.Pointer[core.Head] }

// readJob is a job as last read under the lock.
type readJob struct {
	job     record.Job // detached: never changed after it is kept
	waiting bool       // RUNNABLE, and the core has it waiting
	place   core.Place
	head    *headSlot // its share's, when waiting
}

// describe returns a kept job as clients see it; ok is false when the job
// is not kept or a cycle publishes meanwhile.
func (r *reads) describe(id string) (record.Job, bool) {
	if !r.on {
		return record.Job{}, false
	}
	g := r.gen.Load()
	if g&1 == 1 {
		return record.Job{}, false
	}
	v, ok := r.jobs.Load(id)
	if !ok {
		return record.Job{}, false
	}
	rj := v.(*readJob)
	var h *core.Head
	if rj.waiting {
		h = rj.head.Load()
	}
	if r.gen.Load() != g {
		return record.Job{}, false
	}
	j := record.Detached(&rj.job)
	if rj.waiting {
		reason, ok := rj.reason(h)
		if !ok {
			r.headless.Add(1)
			return record.Job{}, false
		}
		j.StatusReason = reason.String()
	}
	return j, true
}

// reason is why the job waits, given its share's head, as Core.WaitReason
// gives it.
func (rj *readJob) reason(h *core.Head) (core.Reason, bool) {
	switch {
	case rj.place.Infeasible.Code != core.ReasonNone:
		return rj.place.Infeasible, true
	case h == nil || h.Job == "":
		return core.Reason{}, false // a waiting job's share has a head: see reads.headless
	case h.Job == rj.job.JobID:
		return h.Reason, true
	}
	return core.Reason{Code: core.ReasonBlocked, Job: h.Job, Share: rj.place.Share}, true
}

// keepRead keeps live job j, as read under the engine's read lock.
func (e *Engine) keepRead(j *record.Job) {
	r := &e.reads
	if !r.on || r.n.Load() >= r.limit || e.jobs[j.JobID] != j {
		return
	}
	if r.heads == nil {
		r.wanted.Store(true) // the next cycle publishes them
		return
	}
	rj := &readJob{job: record.Detached(j)}
	if j.Status == StatusRunnable {
		if p, ok := e.core.WaitPlace(j.JobID); ok {
			rj.waiting, rj.place = true, p
			if rj.head = r.heads[headKey{p.Queue, p.Share}]; rj.head == nil {
				return
			}
		}
	}
	if _, loaded := r.jobs.Swap(j.JobID, rj); !loaded {
		r.n.Add(1)
	}
}

// publishReads ends a cycle, under its write lock: the jobs it changed are
// no longer kept, and the heads of the pools it may have changed are
// published. A configuration change may change where any job waits, so it
// drops every kept job. While no job is kept and no describe asked for
// heads, none are published, and the next publishing gives them all.
func (e *Engine) publishReads(c *cycle) {
	r := &e.reads
	if !r.on {
		return
	}
	r.gen.Add(1)
	defer r.gen.Add(1)
	if n := e.core.Reconfigurations(); n != r.reconfigs {
		r.reconfigs = n
		r.forgetAll()
	} else if r.n.Load() >= r.limit {
		r.forgetJobs()
	} else if r.n.Load() > 0 {
		for id := range c.jobs {
			r.forget(id)
		}
	}
	if r.n.Load() == 0 && !r.wanted.Swap(false) {
		r.heads = nil
		return
	}
	all := r.heads == nil
	if all {
		r.heads = map[headKey]*headSlot{}
	}
	e.core.Heads(!all, func(h core.Head) {
		k := headKey{h.Queue, h.Share}
		slot := r.heads[k]
		if slot == nil {
			slot = &headSlot{}
			r.heads[k] = slot
		}
		if old := slot.Load(); old == nil || *old != h {
			slot.Store(&h)
		}
	})
}

// forget drops a kept job, under the engine's write lock.
func (r *reads) forget(id string) {
	if _, loaded := r.jobs.LoadAndDelete(id); loaded {
		r.n.Add(-1)
	}
}

// forgetJobs drops every kept job, under the engine's write lock.
func (r *reads) forgetJobs() {
	r.jobs.Clear()
	r.n.Store(0)
}

// reset drops everything kept when the engine's state is rebuilt, under
// its write lock; a read that overlaps it takes the lock. No job is kept
// again before the next publishing, which finds no heads and gives them
// all.
func (r *reads) reset() {
	r.gen.Add(1)
	r.forgetAll()
	r.gen.Add(1)
}

// forgetAll drops every kept job and head, under the engine's write lock.
func (r *reads) forgetAll() {
	r.forgetJobs()
	r.heads = nil
}
