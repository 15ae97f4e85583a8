package core_test

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// refCore is a deliberately naive scheduler written straight from
// shared/spec/scheduling.md part 2, to check the core against. It keeps
// plain slices, recomputes every quantity from scratch each time it needs
// one and follows the order of work of 2.3 literally: rounds of passes 1-4,
// passes 1 and 3 sweeping the heads that qualify when the pass starts,
// passes 2 and 4 acting for the first head they can place, a restart from
// pass 1 after any change. It shares nothing with the core but the public
// types. It is slow on purpose: only small configurations are fed to it.
//
// It accepts the events the random tests generate (everything but Restore).
type refCore struct {
	envs    []*refEnv
	queues  []*refQueue
	shares  []*refShare
	jobs    []*refJob
	now     int64
	pending []core.Decision // failures decided by deletions, reported by the next Step

	// gone holds the dispatched jobs taken out tentatively while victims
	// are chosen; every quantity ignores them.
	gone map[*refJob]bool
}

type refEnv struct {
	name     string
	limits   map[string]int
	disabled bool
}

type refQueue struct {
	name, env string
	quota     bool
	prio      int
	disabled  bool
}

// refShare is a quota share, or the single unnamed share of a FIFO queue
// (strategy 0), which has no limits.
type refShare struct {
	queue, name string
	limits      map[string]int
	strategy    core.Strategy
	borrowLimit int
	inShare     bool
	disabled    bool
	minRuntime  int64 // ns; its jobs younger than this are no victims
}

type refJob struct {
	id, queue, share string
	demand           map[string]int
	units            []string // demand's units, sorted
	prio             int
	queuedAt         int64
	retries          int // -1 unset
	preempted        int
	dispatched       bool
	dispatchedAt     int64
	held             bool  // preempted once at least
	heldAt           int64 // the instant of its last preemption
}

func newRef() *refCore { return &refCore{gone: map[*refJob]bool{}} }

// --- lookups -------------------------------------------------------------

func (r *refCore) env(name string) *refEnv {
	for _, e := range r.envs {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (r *refCore) queue(name string) *refQueue {
	for _, q := range r.queues {
		if q.name == name {
			return q
		}
	}
	return nil
}

func (r *refCore) share(queue, name string) *refShare {
	for _, s := range r.shares {
		if s.queue == queue && s.name == name {
			return s
		}
	}
	return nil
}

func (r *refCore) job(id string) *refJob {
	for _, j := range r.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

func (r *refCore) shareOf(j *refJob) *refShare   { return r.share(j.queue, j.share) }
func (r *refCore) queueOf(s *refShare) *refQueue { return r.queue(s.queue) }
func (r *refCore) envOf(s *refShare) *refEnv     { return r.env(r.queueOf(s).env) }

// sharesOf returns the shares of a queue, by name.
func (r *refCore) sharesOf(queue string) []*refShare {
	var out []*refShare
	for _, s := range r.shares {
		if s.queue == queue {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *refShare) int { return cmp.Compare(a.name, b.name) })
	return out
}

// poolShares returns every share that draws on service environment e.
func (r *refCore) poolShares(e *refEnv) []*refShare {
	var out []*refShare
	for _, q := range r.queues {
		if q.env == e.name {
			out = append(out, r.sharesOf(q.name)...)
		}
	}
	return out
}

func (r *refCore) jobsOf(s *refShare) []*refJob {
	var out []*refJob
	for _, j := range r.jobs {
		if j.queue == s.queue && j.share == s.name {
			out = append(out, j)
		}
	}
	return out
}

// holding reports whether j holds capacity: dispatched and not taken out.
func (r *refCore) holding(j *refJob) bool { return j.dispatched && !r.gone[j] }

func units(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// --- the quantities of 2.1 -----------------------------------------------

func (r *refCore) use(s *refShare, u string) int {
	n := 0
	for _, j := range r.jobsOf(s) {
		if r.holding(j) {
			n += j.demand[u]
		}
	}
	return n
}

func (r *refCore) seFree(e *refEnv, u string) int {
	n := e.limits[u]
	for _, s := range r.poolShares(e) {
		n -= r.use(s, u)
	}
	return n
}

func (r *refCore) ownIdle(s *refShare, u string) int  { return max(0, s.limits[u]-r.use(s, u)) }
func (r *refCore) borrowed(s *refShare, u string) int { return max(0, r.use(s, u)-s.limits[u]) }
func lends(s *refShare) bool {
	return s.strategy == core.Lend || s.strategy == core.LendAndBorrow
}

// free(s,T) = seFree(T) − Σ ownIdle(r,T) over RESERVE shares r other than s.
func (r *refCore) free(s *refShare, u string) int {
	e := r.envOf(s)
	n := r.seFree(e, u)
	for _, o := range r.poolShares(e) {
		if o != s && o.strategy == core.Reserve {
			n -= r.ownIdle(o, u)
		}
	}
	return n
}

// beyondLimits is the SE capacity beyond the sum of all share limits.
func (r *refCore) beyondLimits(e *refEnv, u string) int {
	n := e.limits[u]
	for _, s := range r.poolShares(e) {
		n -= s.limits[u]
	}
	return max(0, n)
}

// lendableTo(s,T) = Σ ownIdle(l,T) over lenders l ≠ s, plus SE capacity
// beyond all share limits, minus Σ_x borrowed(x,T).
func (r *refCore) lendableTo(s *refShare, u string) int {
	e := r.envOf(s)
	n := r.beyondLimits(e, u)
	for _, o := range r.poolShares(e) {
		if o != s && lends(o) {
			n += r.ownIdle(o, u)
		}
		n -= r.borrowed(o, u)
	}
	return n
}

// borrowCap(s,T); -1 stands for ∞.
func borrowCap(s *refShare, u string) int {
	switch {
	case s.strategy != core.LendAndBorrow:
		return 0
	case s.borrowLimit == core.UnlimitedBorrow:
		return -1
	}
	return s.limits[u] * s.borrowLimit / 100
}

// borrowsUnit tells whether dispatched job v of share s borrows (wholly or
// partly) unit u: order the share's dispatched jobs by (priority desc,
// dispatch time asc, job ID); the first fill the limit, the rest borrow.
func (r *refCore) borrowsUnit(s *refShare, v *refJob, u string) bool {
	var held []*refJob
	for _, j := range r.jobsOf(s) {
		if r.holding(j) {
			held = append(held, j)
		}
	}
	slices.SortFunc(held, func(a, b *refJob) int {
		return cmp.Or(-cmp.Compare(a.prio, b.prio), cmp.Compare(a.dispatchedAt, b.dispatchedAt), cmp.Compare(a.id, b.id))
	})
	sum := 0
	for _, j := range held {
		sum += j.demand[u]
		if j == v {
			return v.demand[u] > 0 && sum > s.limits[u]
		}
	}
	return false
}

// --- feasibility (2.2) ---------------------------------------------------

// infeasible tells why j can never be placed as configured, or ReasonNone.
func (r *refCore) infeasible(j *refJob) core.ReasonCode {
	s := r.shareOf(j)
	e := r.envOf(s)
	for _, u := range j.units {
		if j.demand[u] > e.limits[u] {
			return core.ReasonEnvMaxResource
		}
	}
	if s.strategy == 0 {
		return core.ReasonNone
	}
	for _, u := range j.units {
		d, lim := j.demand[u], s.limits[u]
		if d <= lim {
			continue
		}
		if s.strategy != core.LendAndBorrow {
			return core.ReasonShareLimit
		}
		if c := borrowCap(s, u); c >= 0 && d > lim+c {
			return core.ReasonShareBorrowLimit
		}
		// All that other shares could ever lend: the limits of the other
		// lenders plus the SE capacity beyond all share limits.
		could := r.beyondLimits(e, u)
		for _, o := range r.poolShares(e) {
			if o != s && lends(o) {
				could += o.limits[u]
			}
		}
		if d-lim > could {
			return core.ReasonBorrowable
		}
	}
	return core.ReasonNone
}

// waiting returns share s's RUNNABLE jobs in order: feasible ones by
// priority desc, queue time, job ID (a FIFO queue by queue time, job ID),
// then the infeasible ones in the same order.
func (r *refCore) waiting(s *refShare) (feasible, infeasible []*refJob) {
	for _, j := range r.jobsOf(s) {
		switch {
		case j.dispatched:
		case r.infeasible(j) != core.ReasonNone:
			infeasible = append(infeasible, j)
		default:
			feasible = append(feasible, j)
		}
	}
	order := func(a, b *refJob) int {
		if s.strategy != 0 && a.prio != b.prio {
			return -cmp.Compare(a.prio, b.prio)
		}
		return cmp.Or(cmp.Compare(a.queuedAt, b.queuedAt), cmp.Compare(a.id, b.id))
	}
	slices.SortFunc(feasible, order)
	slices.SortFunc(infeasible, order)
	return feasible, infeasible
}

// head is the first feasible RUNNABLE job of s, or nil.
func (r *refCore) head(s *refShare) *refJob {
	if f, _ := r.waiting(s); len(f) > 0 {
		return f[0]
	}
	return nil
}

// --- the predicates of 2.3 -----------------------------------------------

func (r *refCore) ownFit(j *refJob) bool {
	s := r.shareOf(j)
	for _, u := range j.units {
		if r.use(s, u)+j.demand[u] > s.limits[u] {
			return false
		}
	}
	return true
}

func (r *refCore) placeOwn(j *refJob) bool {
	if !r.ownFit(j) {
		return false
	}
	s := r.shareOf(j)
	for _, u := range j.units {
		if r.free(s, u) < j.demand[u] {
			return false
		}
	}
	return true
}

func (r *refCore) borrowPart(j *refJob, u string) int {
	return max(0, j.demand[u]-r.ownIdle(r.shareOf(j), u))
}

func (r *refCore) placeBorrow(j *refJob) bool {
	s := r.shareOf(j)
	if s.strategy != core.LendAndBorrow || r.ownFit(j) {
		return false
	}
	for _, u := range j.units {
		part := r.borrowPart(j, u)
		if c := borrowCap(s, u); c >= 0 && r.borrowed(s, u)+part > c {
			return false
		}
		if part > r.lendableTo(s, u) || r.free(s, u) < j.demand[u] {
			return false
		}
	}
	return true
}

// ratio is the largest use(s,T)/limit(s,T) over the units j needs. Only
// asked of jobs that fit their own limit, so every limit is positive.
func (r *refCore) ratio(j *refJob) float64 {
	s := r.shareOf(j)
	x := 0.0
	for _, u := range j.units {
		x = max(x, float64(r.use(s, u))/float64(s.limits[u]))
	}
	return x
}

// seFits: a FIFO queue's job fits the SE's free capacity.
func (r *refCore) seFits(j *refJob) bool {
	e := r.envOf(r.shareOf(j))
	for _, u := range j.units {
		if r.seFree(e, u) < j.demand[u] {
			return false
		}
	}
	return true
}

// --- one cycle (2.3) -----------------------------------------------------

// Step runs one cycle over every service environment, in name order.
func (r *refCore) Step(now time.Time) core.Decisions {
	r.now = now.UnixNano()
	ds := core.Decisions{List: r.pending}
	r.pending = nil
	envs := slices.Clone(r.envs)
	slices.SortFunc(envs, func(a, b *refEnv) int { return cmp.Compare(a.name, b.name) })
	for _, e := range envs {
		if e.disabled {
			continue // a DISABLED SE places nothing new
		}
		for {
			var changed bool
			if r.quotaEnv(e) {
				changed = r.quotaRound(e, &ds.List)
			} else {
				changed = r.fifoRound(e, &ds.List)
			}
			if !changed {
				break
			}
		}
	}
	return ds
}

func (r *refCore) quotaEnv(e *refEnv) bool {
	for _, q := range r.queues {
		if q.env == e.name && q.quota {
			return true
		}
	}
	return false
}

// heads returns the heads that may be placed now: the first feasible
// RUNNABLE job of each share of an ENABLED queue on e, unless it was
// preempted at this instant (it then still blocks its share).
func (r *refCore) heads(e *refEnv) []*refJob {
	var hs []*refJob
	for _, s := range r.poolShares(e) {
		if r.queueOf(s).disabled {
			continue
		}
		if h := r.head(s); h != nil && !r.heldNow(h) {
			hs = append(hs, h)
		}
	}
	return hs
}

func (r *refCore) isHead(j *refJob) bool {
	return r.job(j.id) == j && !j.dispatched && r.head(r.shareOf(j)) == j && !r.heldNow(j)
}

// quotaRound runs passes 1-4 and reports whether one changed anything.
func (r *refCore) quotaRound(e *refEnv, out *[]core.Decision) bool {
	// 1. Own capacity: heads with ownFit by ratio asc, priority desc, queue
	// time, job ID; each that placeOwn is dispatched.
	var own []*refJob
	for _, h := range r.heads(e) {
		if r.ownFit(h) {
			own = append(own, h)
		}
	}
	byRatio := func(a, b *refJob) int {
		return cmp.Or(cmp.Compare(r.ratio(a), r.ratio(b)), -cmp.Compare(a.prio, b.prio),
			cmp.Compare(a.queuedAt, b.queuedAt), cmp.Compare(a.id, b.id))
	}
	slices.SortFunc(own, byRatio)
	changed := false
	for _, h := range own {
		if r.isHead(h) && r.placeOwn(h) {
			r.dispatch(h, core.ViaIdle, out)
			changed = true
		}
	}
	if changed {
		return true
	}
	// 2. Reclaim: heads with ownFit but not placeOwn, same order; the first
	// one that a set of borrowers makes fit preempts them and is dispatched.
	var reclaim []*refJob
	for _, h := range r.heads(e) {
		if r.ownFit(h) && !r.placeOwn(h) {
			reclaim = append(reclaim, h)
		}
	}
	slices.SortFunc(reclaim, byRatio)
	for _, h := range reclaim {
		if vs := r.takeBorrowers(h); vs != nil {
			clear(r.gone)
			r.preemptFor(h, vs, core.ViaReclaim, out)
			return true
		}
	}
	// 3. Borrow: heads with placeBorrow, FIFO.
	var borrow []*refJob
	for _, h := range r.heads(e) {
		if r.placeBorrow(h) {
			borrow = append(borrow, h)
		}
	}
	slices.SortFunc(borrow, func(a, b *refJob) int {
		return cmp.Or(cmp.Compare(a.queuedAt, b.queuedAt), cmp.Compare(a.id, b.id))
	})
	for _, h := range borrow {
		if r.isHead(h) && r.placeBorrow(h) {
			r.dispatch(h, core.ViaIdle, out)
			changed = true
		}
	}
	if changed {
		return true
	}
	// 4. In-share preemption: heads of shares with it ENABLED, by priority
	// desc, queue time, job ID; the first one that can be placed is.
	var ins []*refJob
	for _, h := range r.heads(e) {
		if r.shareOf(h).inShare {
			ins = append(ins, h)
		}
	}
	slices.SortFunc(ins, func(a, b *refJob) int {
		return cmp.Or(-cmp.Compare(a.prio, b.prio), cmp.Compare(a.queuedAt, b.queuedAt), cmp.Compare(a.id, b.id))
	})
	for _, h := range ins {
		if vs := r.inShareVictims(h); vs != nil {
			r.preemptFor(h, vs, core.ViaInShare, out)
			return true
		}
	}
	return false
}

// victimOrder: lowest priority first, then most recently dispatched, then
// job ID.
func victimOrder(a, b *refJob) int {
	return cmp.Or(cmp.Compare(a.prio, b.prio), -cmp.Compare(a.dispatchedAt, b.dispatchedAt), cmp.Compare(a.id, b.id))
}

// borrowers returns the dispatched jobs of shares other than h's that
// borrow a unit h needs, in victim order.
func (r *refCore) borrowers(h *refJob) []*refJob {
	hs := r.shareOf(h)
	var out []*refJob
	for _, s := range r.poolShares(r.envOf(hs)) {
		if s == hs {
			continue
		}
		for _, j := range r.jobsOf(s) {
			if !r.holding(j) || r.protected(j) {
				continue
			}
			for _, u := range h.units {
				if r.borrowsUnit(s, j, u) {
					out = append(out, j)
					break
				}
			}
		}
	}
	slices.SortFunc(out, victimOrder)
	return out
}

// takeBorrowers removes borrowers in victim order, re-deriving who borrows
// after each removal, until placeOwn(h); then puts back, in reverse order,
// each victim without which h still fits. The victims stay taken out. It
// returns nil (and puts everything back) when removing every candidate is
// not enough.
func (r *refCore) takeBorrowers(h *refJob) []*refJob {
	var vs []*refJob
	for !r.placeOwn(h) {
		cands := r.borrowers(h)
		if len(cands) == 0 {
			for _, v := range vs {
				delete(r.gone, v)
			}
			return nil
		}
		r.gone[cands[0]] = true
		vs = append(vs, cands[0])
	}
	return r.putBack(vs, func() bool { return r.placeOwn(h) })
}

// putBack puts back, in reverse order, each victim without which fits
// still holds, and returns the others in removal order.
func (r *refCore) putBack(vs []*refJob, fits func() bool) []*refJob {
	keep := make([]bool, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		delete(r.gone, vs[i])
		if !fits() {
			r.gone[vs[i]] = true
			keep[i] = true
		}
	}
	var out []*refJob
	for i, v := range vs {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}

// inShareVictims is pass 4 for head h: lower-priority jobs of its own share
// until ownFit or placeBorrow, then, if the SE capacity is lent out,
// borrowers of other shares until placeOwn; then the own-share victims not
// needed are put back. It returns nil when no set makes h fit.
func (r *refCore) inShareVictims(h *refJob) []*refJob {
	defer clear(r.gone)
	s := r.shareOf(h)
	var own []*refJob
	for !r.ownFit(h) && !r.placeBorrow(h) {
		var cands []*refJob
		for _, j := range r.jobsOf(s) {
			if r.holding(j) && j.prio < h.prio && !r.protected(j) {
				cands = append(cands, j)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		slices.SortFunc(cands, victimOrder)
		r.gone[cands[0]] = true
		own = append(own, cands[0])
	}
	var cross []*refJob
	if !r.placeOwn(h) && !r.placeBorrow(h) {
		if cross = r.takeBorrowers(h); cross == nil {
			return nil
		}
	}
	// With borrowers of other shares preempted, the head must fit within its
	// own limit: borrowing never preempts another share's job.
	fits := func() bool { return r.placeOwn(h) || r.placeBorrow(h) }
	if len(cross) > 0 {
		fits = func() bool { return r.placeOwn(h) }
	}
	own = r.putBack(own, fits)
	if len(own)+len(cross) == 0 {
		panic("reference: pass 4 found a head that fits without victims")
	}
	return append(own, cross...)
}

// preemptFor preempts vs and dispatches h on the capacity they held: one
// decision.
func (r *refCore) preemptFor(h *refJob, vs []*refJob, via core.Via, out *[]core.Decision) {
	hs := r.shareOf(h)
	for _, v := range vs {
		vsh := r.shareOf(v)
		d := core.Decision{Kind: core.Preempt, Job: v.id, Queue: v.queue, Share: v.share, For: h.id, ForShare: hs.name}
		if vsh == hs {
			d.Preemption, d.Reason = core.InShare, core.Reason{Code: core.ReasonPreemptedInShare, Job: h.id, Share: hs.name}
		} else {
			d.Preemption, d.Reason = core.CrossShare, core.Reason{Code: core.ReasonPreemptedCrossShare, Job: h.id, Share: hs.name}
		}
		v.dispatched = false
		v.preempted++
		if v.retries >= 0 && v.preempted > v.retries {
			r.remove(v)
			*out = append(*out, d, core.Decision{Kind: core.Fail, Job: v.id, Queue: v.queue, Share: v.share,
				Reason: core.Reason{Code: core.ReasonRetriesExhausted}})
			continue
		}
		d.Requeued = true
		v.held, v.heldAt = true, r.now
		*out = append(*out, d)
	}
	if !r.placeOwn(h) && !r.placeBorrow(h) {
		panic("reference: victims did not make room for " + h.id)
	}
	r.dispatch(h, via, out)
}

// dispatch makes h SCHEDULED, reporting what is within its share's limit
// and what it borrows.
func (r *refCore) dispatch(h *refJob, via core.Via, out *[]core.Decision) {
	s := r.shareOf(h)
	d := core.Decision{Kind: core.Dispatch, Job: h.id, Queue: h.queue, Share: h.share, Via: via}
	for _, u := range h.units {
		n := h.demand[u]
		own := n
		if s.strategy != 0 {
			own = min(n, r.ownIdle(s, u))
		}
		if own > 0 {
			d.Own = append(d.Own, core.UnitCount{Unit: u, Count: own})
		}
		if n > own {
			d.Borrowed = append(d.Borrowed, core.UnitCount{Unit: u, Count: n - own})
		}
	}
	h.dispatched = true
	h.dispatchedAt = r.now
	*out = append(*out, d)
}

// fifoRound dispatches the heads of the FIFO queues on e, by queue priority
// desc, queue time, job ID, each that fits the SE's free capacity.
func (r *refCore) fifoRound(e *refEnv, out *[]core.Decision) bool {
	hs := r.heads(e)
	slices.SortFunc(hs, func(a, b *refJob) int {
		return cmp.Or(-cmp.Compare(r.queue(a.queue).prio, r.queue(b.queue).prio),
			cmp.Compare(a.queuedAt, b.queuedAt), cmp.Compare(a.id, b.id))
	})
	changed := false
	for _, h := range hs {
		if r.isHead(h) && r.seFits(h) {
			r.dispatch(h, core.ViaIdle, out)
			changed = true
		}
	}
	return changed
}

// protected tells whether dispatched job j is younger than its share's
// minimum runtime: no pass may pick it as a victim.
func (r *refCore) protected(j *refJob) bool {
	m := r.shareOf(j).minRuntime
	return j.dispatched && m > 0 && r.now-j.dispatchedAt < m
}

// heldNow tells whether j was preempted at this instant: it may not be
// dispatched again before the next one (2.3).
func (r *refCore) heldNow(j *refJob) bool { return j.held && j.heldAt == r.now }

func (r *refCore) remove(j *refJob) {
	r.jobs = slices.DeleteFunc(r.jobs, func(x *refJob) bool { return x == j })
}
