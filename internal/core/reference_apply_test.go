package core_test

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// Apply checks and applies one event to the reference. A rejected event
// returns an error of the same class as the core's and changes nothing.
func (r *refCore) Apply(ev core.Event) error {
	switch e := ev.(type) {
	case core.PutEnv:
		return r.putEnv(e)
	case core.DeleteEnv:
		return r.deleteEnv(e)
	case core.PutQueue:
		return r.putQueue(e)
	case core.DeleteQueue:
		return r.deleteQueue(e)
	case core.PutShare:
		return r.putShare(e)
	case core.DeleteShare:
		return r.deleteShare(e)
	case core.Submit:
		return r.submit(e)
	case core.SetPriority:
		return r.setPriority(e)
	case core.Terminate:
		j := r.job(e.Job)
		if j == nil {
			return core.ErrNotFound
		}
		r.remove(j)
		return nil
	case core.AttemptEnded:
		j := r.job(e.Job)
		switch {
		case j == nil:
			return core.ErrNotFound
		case !j.dispatched:
			return core.ErrConflict
		case e.Requeue:
			j.dispatched = false // back to RUNNABLE at its old place
		default:
			r.remove(j)
		}
		return nil
	case nil:
		return core.ErrInvalid
	}
	panic(fmt.Sprintf("reference: unsupported event %T", ev))
}

// limitsOf checks capacity amounts: named units, counts of at least
// minCount, none listed twice. It sums nothing.
func limitsOf(us []core.UnitCount, minCount int) (map[string]int, error) {
	m := map[string]int{}
	for _, u := range us {
		if _, dup := m[u.Unit]; dup || u.Unit == "" || u.Count < minCount {
			return nil, core.ErrInvalid
		}
		m[u.Unit] = u.Count
	}
	return m, nil
}

func (r *refCore) putEnv(ev core.PutEnv) error {
	lim, err := limitsOf(ev.Limits, 0)
	if ev.Name == "" || err != nil {
		return core.ErrInvalid
	}
	e := r.env(ev.Name)
	if e == nil {
		e = &refEnv{name: ev.Name}
		r.envs = append(r.envs, e)
	}
	e.limits, e.disabled = lim, ev.Disabled
	return nil
}

func (r *refCore) deleteEnv(ev core.DeleteEnv) error {
	e := r.env(ev.Name)
	if e == nil {
		return core.ErrNotFound
	}
	for _, q := range r.queues {
		if q.env == e.name {
			return core.ErrConflict
		}
	}
	r.envs = slices.DeleteFunc(r.envs, func(x *refEnv) bool { return x == e })
	return nil
}

func (r *refCore) putQueue(ev core.PutQueue) error {
	if ev.Name == "" {
		return core.ErrInvalid
	}
	if r.env(ev.Env) == nil {
		return core.ErrNotFound
	}
	q := r.queue(ev.Name)
	if q != nil && q.quota != ev.QuotaShares {
		return core.ErrConflict
	}
	// A quota-share queue is its environment's only queue.
	for _, o := range r.queues {
		if o != q && o.env == ev.Env && (ev.QuotaShares || o.quota) {
			return core.ErrConflict
		}
	}
	if q != nil && q.env != ev.Env {
		for _, j := range r.jobs {
			if j.queue == q.name {
				return core.ErrConflict
			}
		}
	}
	if q == nil {
		q = &refQueue{name: ev.Name, quota: ev.QuotaShares}
		r.queues = append(r.queues, q)
		if !q.quota {
			r.shares = append(r.shares, &refShare{queue: q.name, limits: map[string]int{}})
		}
	}
	q.env, q.prio, q.disabled = ev.Env, ev.Priority, ev.Disabled
	return nil
}

func (r *refCore) deleteQueue(ev core.DeleteQueue) error {
	q := r.queue(ev.Name)
	if q == nil {
		return core.ErrNotFound
	}
	if !q.disabled {
		return core.ErrConflict
	}
	for _, s := range r.sharesOf(q.name) {
		r.failAll(s, core.ReasonQueueDeleted)
		r.shares = slices.DeleteFunc(r.shares, func(x *refShare) bool { return x == s })
	}
	r.queues = slices.DeleteFunc(r.queues, func(x *refQueue) bool { return x == q })
	return nil
}

// failAll fails every job of a share that is being deleted, by job ID.
func (r *refCore) failAll(s *refShare, code core.ReasonCode) {
	js := r.jobsOf(s)
	slices.SortFunc(js, func(a, b *refJob) int { return cmp.Compare(a.id, b.id) })
	for _, j := range js {
		r.remove(j)
		r.pending = append(r.pending, core.Decision{Kind: core.Fail, Job: j.id, Queue: j.queue, Share: j.share,
			Reason: core.Reason{Code: code, Share: j.share}})
	}
}

func (r *refCore) putShare(ev core.PutShare) error {
	q := r.queue(ev.Queue)
	if q == nil {
		return core.ErrNotFound
	}
	if !q.quota {
		return core.ErrConflict
	}
	lim, err := limitsOf(ev.Limits, 0)
	if ev.Name == "" || err != nil || ev.Strategy < core.Reserve || ev.Strategy > core.LendAndBorrow || ev.BorrowLimit < core.UnlimitedBorrow || ev.MinRuntime < 0 {
		return core.ErrInvalid
	}
	s := r.share(q.name, ev.Name)
	if s == nil {
		s = &refShare{queue: q.name, name: ev.Name}
		r.shares = append(r.shares, s)
	}
	s.limits, s.strategy, s.borrowLimit, s.inShare, s.disabled = lim, ev.Strategy, ev.BorrowLimit, ev.InSharePreemption, ev.Disabled
	s.minRuntime = int64(ev.MinRuntime)
	return nil
}

func (r *refCore) deleteShare(ev core.DeleteShare) error {
	q := r.queue(ev.Queue)
	if q == nil {
		return core.ErrNotFound
	}
	s := r.share(q.name, ev.Name)
	if s == nil || !q.quota {
		return core.ErrNotFound
	}
	if !s.disabled {
		return core.ErrConflict
	}
	r.failAll(s, core.ReasonShareDeleted)
	r.shares = slices.DeleteFunc(r.shares, func(x *refShare) bool { return x == s })
	return nil
}

func (r *refCore) submit(ev core.Submit) error {
	switch {
	case ev.Job == "":
		return core.ErrInvalid
	case r.job(ev.Job) != nil:
		return core.ErrConflict
	case ev.Priority < 0 || ev.Priority > core.MaxPriority || ev.PreemptionRetries < -1:
		return core.ErrInvalid
	}
	q := r.queue(ev.Queue)
	if q == nil {
		return core.ErrNotFound
	}
	if q.quota != (ev.Share != "") {
		return core.ErrInvalid
	}
	s := r.share(q.name, ev.Share)
	if s == nil {
		return core.ErrNotFound
	}
	// A DISABLED share or queue accepts no new jobs.
	if s.disabled || q.disabled {
		return core.ErrConflict
	}
	demand := map[string]int{}
	for _, u := range ev.Demand {
		if u.Unit == "" || u.Count < 1 {
			return core.ErrInvalid
		}
		demand[u.Unit] += u.Count // instance groups of one type add up
		if demand[u.Unit] > 1<<30 {
			return core.ErrInvalid
		}
	}
	if len(demand) == 0 {
		return core.ErrInvalid
	}
	r.jobs = append(r.jobs, &refJob{id: ev.Job, queue: q.name, share: s.name, demand: demand, units: units(demand), prio: ev.Priority,
		queuedAt: ev.QueuedAt, retries: ev.PreemptionRetries, preempted: ev.Preempted})
	return nil
}

func (r *refCore) setPriority(ev core.SetPriority) error {
	j := r.job(ev.Job)
	if j == nil {
		return core.ErrNotFound
	}
	if ev.Priority < 0 || ev.Priority > core.MaxPriority {
		return core.ErrInvalid
	}
	j.prio = ev.Priority
	return nil
}

// --- queries, as the core answers them -----------------------------------

// Job is the reference's core.Job.
func (r *refCore) Job(id string) (core.JobStatus, bool) {
	j := r.job(id)
	if j == nil {
		return core.JobStatus{}, false
	}
	return r.statuses(r.shareOf(j))[j.id], true
}

// statuses returns the status of every job of share s.
func (r *refCore) statuses(s *refShare) map[string]core.JobStatus {
	out := map[string]core.JobStatus{}
	feasible, infeasible := r.waiting(s)
	for _, j := range r.jobsOf(s) {
		st := core.JobStatus{Queue: j.queue, Share: j.share, Priority: j.prio, Position: -1, Preempted: j.preempted}
		if j.dispatched {
			st.Dispatched = true
		} else {
			st.Position = slices.Index(append(feasible, infeasible...), j)
			st.Reason = r.reason(j, feasible)
		}
		out[j.id] = st
	}
	return out
}

// reason says why RUNNABLE job j waits, in the core's terms: infeasible,
// blocked behind its share's head, or why the head was not placed.
// feasible is the share's feasible RUNNABLE jobs in order.
func (r *refCore) reason(j *refJob, feasible []*refJob) core.Reason {
	if code := r.infeasible(j); code != core.ReasonNone {
		why := core.Reason{Code: code}
		if code == core.ReasonEnvMaxResource {
			e := r.envOf(r.shareOf(j))
			for _, u := range j.units {
				if j.demand[u] > e.limits[u] {
					why.Env, why.Unit, why.Need, why.Limit = e.name, u, j.demand[u], e.limits[u]
					break
				}
			}
		}
		return why
	}
	s := r.shareOf(j)
	if h := feasible[0]; h != j {
		return core.Reason{Code: core.ReasonBlocked, Job: h.id, Share: s.name}
	}
	switch {
	case r.envOf(s).disabled:
		return core.Reason{Code: core.ReasonEnvDisabled}
	case r.queueOf(s).disabled:
		return core.Reason{Code: core.ReasonQueueDisabled}
	case r.heldNow(j):
		return core.Reason{Code: core.ReasonHeldBack}
	}
	if why, ok := r.minRuntimeReason(j); ok {
		return why
	}
	if s.strategy == 0 || r.ownFit(j) {
		// It fits its share's limit (or has none): some unit is short.
		for _, u := range j.units {
			free := r.seFree(r.envOf(s), u)
			if s.strategy != 0 {
				free = r.free(s, u)
			}
			if free < j.demand[u] && s.strategy == 0 {
				return core.Reason{Code: core.ReasonCapacity, Unit: u, Need: j.demand[u]}
			}
			if free < j.demand[u] {
				return r.withReserved(core.Reason{Code: core.ReasonCapacity, Unit: u, Need: j.demand[u], Share: s.name}, s, u)
			}
		}
		return core.Reason{Code: core.ReasonCapacity, Share: s.name}
	}
	// Beyond its limit: it cannot borrow, may not borrow more, or too little
	// is lendable; else some unit's free capacity is short.
	for _, u := range j.units {
		d := j.demand[u]
		if r.use(s, u)+d <= s.limits[u] {
			continue
		}
		why := core.Reason{Code: core.ReasonAtLimit, Share: s.name, Unit: u, Limit: s.limits[u], Need: d}
		if s.strategy != core.LendAndBorrow {
			why.Code = core.ReasonShareFull
			return r.withLendable(why, s, u)
		}
		if c := borrowCap(s, u); c >= 0 && r.borrowed(s, u)+r.borrowPart(j, u) > c {
			why.Code, why.BorrowCap = core.ReasonAtBorrowLimit, c
			return r.withLendable(why, s, u)
		}
		if r.borrowPart(j, u) > r.lendableTo(s, u) {
			why.Lendable = max(0, r.lendableTo(s, u))
			return r.withReserved(why, s, u)
		}
	}
	for _, u := range j.units {
		if r.free(s, u) < j.demand[u] {
			return r.withReserved(core.Reason{Code: core.ReasonCapacity, Unit: u, Need: j.demand[u], Share: s.name}, s, u)
		}
	}
	return core.Reason{Code: core.ReasonCapacity, Share: s.name}
}

// minRuntimeReason: head j was not placed, and among the jobs it could
// preempt but for their minimum runtime (borrowers of a unit it needs in
// other shares, when it fits its own limit; lower-priority jobs of its own
// share, when it does not and in-share preemption is ENABLED) it waits for
// the one whose protection ends first, then the first in victim order.
func (r *refCore) minRuntimeReason(j *refJob) (core.Reason, bool) {
	s := r.shareOf(j)
	if s.strategy == 0 {
		return core.Reason{}, false
	}
	var cands []*refJob
	switch {
	case r.ownFit(j):
		if r.placeOwn(j) {
			return core.Reason{}, false
		}
		for _, x := range r.poolShares(r.envOf(s)) {
			if x == s {
				continue
			}
			for _, v := range r.jobsOf(x) {
				if !r.holding(v) || !r.protected(v) {
					continue
				}
				for _, u := range j.units {
					if r.borrowsUnit(x, v, u) {
						cands = append(cands, v)
						break
					}
				}
			}
		}
	case s.inShare && !r.placeBorrow(j):
		for _, v := range r.jobsOf(s) {
			if r.holding(v) && v.prio < j.prio && r.protected(v) {
				cands = append(cands, v)
			}
		}
	}
	if len(cands) == 0 {
		return core.Reason{}, false
	}
	until := func(v *refJob) int64 { return v.dispatchedAt + r.shareOf(v).minRuntime }
	v := slices.MinFunc(cands, func(a, b *refJob) int { return cmp.Or(cmp.Compare(until(a), until(b)), victimOrder(a, b)) })
	x := r.shareOf(v)
	return core.Reason{Code: core.ReasonMinRuntime, Job: v.id, Share: x.name, MinRuntime: time.Duration(x.minRuntime), Until: until(v)}, true
}

// Usage is the reference's core.Usage: borrowed capacity is attributed as
// loans attributes it.
func (r *refCore) Usage(queue string) []core.ShareUsage {
	q := r.queue(queue)
	if q == nil {
		return nil
	}
	type key struct {
		s    *refShare
		unit string
	}
	from, to := map[key][]core.ShareCount{}, map[key][]core.ShareCount{}
	lent := map[key]int{}
	add := func(cs []core.ShareCount, name string, n int, rec bool) []core.ShareCount {
		for i := range cs {
			if cs[i].Share == name {
				cs[i].Count += n
				return cs
			}
		}
		return append(cs, core.ShareCount{Share: name, Count: n, Reclaimable: rec})
	}
	for _, u := range r.queueUnits(q) {
		for _, l := range r.loans(q, u) {
			b := key{r.shareOf(l.job), u}
			if l.lender == nil {
				from[b] = add(from[b], "", l.n, false)
				continue
			}
			from[b] = add(from[b], l.lender.name, l.n, r.reclaims(l.lender, u))
			k := key{l.lender, u}
			to[k] = add(to[k], b.s.name, l.n, false)
			lent[k] += l.n
		}
	}
	byName := func(a, b core.ShareCount) int { return refLenderCmp(a.Share, b.Share) }
	var out []core.ShareUsage
	for _, s := range r.sharesOf(q.name) {
		su := core.ShareUsage{Share: s.name, Strategy: s.strategy}
		for _, u := range r.queueUnits(q) {
			used, lim := r.use(s, u), s.limits[u]
			if used == 0 && lim == 0 {
				continue
			}
			k := key{s, u}
			uu := core.UnitUsage{Unit: u, Limit: lim, Used: used, Own: min(used, lim), Borrowed: r.borrowed(s, u),
				BorrowedFrom: from[k], LentTo: to[k]}
			if s.strategy == 0 {
				uu.Own, uu.Borrowed = used, 0 // a FIFO queue has no quota to borrow beyond
			}
			uu.Lent = lent[k]
			uu.Idle = r.ownIdle(s, u) - uu.Lent
			slices.SortFunc(uu.BorrowedFrom, byName)
			slices.SortFunc(uu.LentTo, byName)
			su.Units = append(su.Units, uu)
		}
		out = append(out, su)
	}
	return out
}

// QueueFront is the reference's core.QueueFront: feasible RUNNABLE jobs by
// priority desc, their share's largest use/limit asc, queue time, job ID.
// In a FIFO queue priority plays no part.
func (r *refCore) QueueFront(queue string, n int) []string {
	q := r.queue(queue)
	if q == nil {
		return nil
	}
	type entry struct {
		j     *refJob
		ratio float64
	}
	var es []entry
	for _, s := range r.sharesOf(q.name) {
		ratio := 0.0
		for u, lim := range s.limits {
			if lim > 0 {
				ratio = max(ratio, float64(r.use(s, u))/float64(lim))
			}
		}
		f, _ := r.waiting(s)
		for _, j := range f {
			es = append(es, entry{j, ratio})
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		prio := -cmp.Compare(a.j.prio, b.j.prio)
		if !q.quota {
			prio = 0
		}
		return cmp.Or(prio, cmp.Compare(a.ratio, b.ratio), cmp.Compare(a.j.queuedAt, b.j.queuedAt), cmp.Compare(a.j.id, b.j.id))
	})
	var out []string
	for i := 0; i < len(es) && i < n; i++ {
		out = append(out, es[i].j.id)
	}
	return out
}
