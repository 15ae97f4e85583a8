package core_test

import (
	"cmp"
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
)

// The reference's attribution of borrowed capacity, written from the rule
// in docs/decisions.md ("Whose capacity a job runs on") with plain loops:
// borrowed instances stand on the capacity beyond all share limits as far
// as it goes, the rest on shares' idle capacity, lenders before RESERVE
// shares and within each those whose head reclaims the unit first, each
// group by name; the borrowers, least exposed first (reverse victim order),
// take the capacity nobody owns, then the shares that do not reclaim, then
// those that do (lenders before RESERVE shares, by name, in each).

// refLoan is a piece of a job's borrowed capacity.
type refLoan struct {
	job    *refJob
	unit   string
	n      int
	lender *refShare // nil: capacity beyond all share limits
}

// reclaims: s's head needs u and fits s's limits on every unit.
func (r *refCore) reclaims(s *refShare, u string) bool {
	h := r.head(s)
	if h == nil || h.demand[u] == 0 {
		return false
	}
	for v, n := range h.demand {
		if n > s.limits[v] {
			return false
		}
	}
	return true
}

// borrowedParts is how much of u each dispatched job of share s borrows:
// its instances beyond the limit when the share's dispatched jobs are
// stacked in dispatch order.
func (r *refCore) borrowedParts(s *refShare, u string) map[*refJob]int {
	var held []*refJob
	for _, x := range r.jobsOf(s) {
		if r.holding(x) {
			held = append(held, x)
		}
	}
	slices.SortFunc(held, func(a, b *refJob) int {
		return cmp.Or(-cmp.Compare(a.prio, b.prio), cmp.Compare(a.dispatchedAt, b.dispatchedAt), cmp.Compare(a.id, b.id))
	})
	out := map[*refJob]int{}
	below := 0
	for _, j := range held {
		if n := max(0, below+j.demand[u]-max(below, s.limits[u])); n > 0 {
			out[j] = n
		}
		below += j.demand[u]
	}
	return out
}

// loans attributes every borrowed instance of unit u in quota queue q.
func (r *refCore) loans(q *refQueue, u string) []refLoan {
	if !q.quota {
		return nil
	}
	e := r.env(q.env)
	shares := r.sharesOf(q.name)
	type part struct {
		j *refJob
		n int
	}
	var parts []part
	total := 0
	for _, s := range shares {
		for j, n := range r.borrowedParts(s, u) {
			parts = append(parts, part{j, n})
			total += n
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return victimOrder(b.j, a.j) })
	// How much each share's idle capacity holds.
	reclaims := map[*refShare]bool{}
	for _, s := range shares {
		reclaims[s] = r.reclaims(s, u)
	}
	tier := func(s *refShare) int {
		t := 0
		if !lends(s) {
			t = 2
		}
		if !reclaims[s] {
			t++
		}
		return t
	}
	ordered := slices.Clone(shares)
	slices.SortStableFunc(ordered, func(a, b *refShare) int { return cmp.Compare(tier(a), tier(b)) })
	type src struct {
		s *refShare
		n int
	}
	var srcs []src
	onShares := max(0, total-r.beyondLimits(e, u))
	for _, s := range ordered {
		if n := min(onShares, r.ownIdle(s, u)); n > 0 {
			srcs = append(srcs, src{s, n})
			onShares -= n
		}
	}
	given := 0
	for _, x := range srcs {
		given += x.n
	}
	// Taken by the least exposed borrowers first: nobody's capacity, then
	// shares that do not reclaim, then those that do.
	srcs = slices.Insert(srcs, 0, src{nil, total - given})
	rank := func(x src) int {
		switch {
		case x.s == nil:
			return 0
		case reclaims[x.s]:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(srcs, func(a, b src) int { return cmp.Compare(rank(a), rank(b)) })
	var out []refLoan
	for _, p := range parts {
		for need := p.n; need > 0; {
			for srcs[0].n == 0 {
				srcs = srcs[1:]
			}
			n := min(need, srcs[0].n)
			out = append(out, refLoan{job: p.j, unit: u, n: n, lender: srcs[0].s})
			srcs[0].n -= n
			need -= n
		}
	}
	return out
}

// Holdings is the reference's core.Holdings.
func (r *refCore) Holdings(queue string) []core.Holding {
	q := r.queue(queue)
	if q == nil {
		return nil
	}
	byJob := map[*refJob][]core.Loan{}
	for _, u := range r.queueUnits(q) {
		for _, l := range r.loans(q, u) {
			name, rec := "", false
			if l.lender != nil {
				name, rec = l.lender.name, r.reclaims(l.lender, u)
			}
			ls := byJob[l.job]
			if k := len(ls) - 1; k >= 0 && ls[k].Unit == u && ls[k].Lender == name {
				ls[k].Count += l.n
			} else {
				ls = append(ls, core.Loan{Unit: u, Count: l.n, Lender: name, Reclaimable: rec})
			}
			byJob[l.job] = ls
		}
	}
	var out []core.Holding
	for _, s := range r.sharesOf(q.name) {
		var held []*refJob
		for _, j := range r.jobsOf(s) {
			if j.dispatched {
				held = append(held, j)
			}
		}
		slices.SortFunc(held, func(a, b *refJob) int {
			return cmp.Or(-cmp.Compare(a.prio, b.prio), cmp.Compare(a.dispatchedAt, b.dispatchedAt), cmp.Compare(a.id, b.id))
		})
		for _, j := range held {
			ls := byJob[j]
			slices.SortStableFunc(ls, func(a, b core.Loan) int {
				return cmp.Or(cmp.Compare(a.Unit, b.Unit), refLenderCmp(a.Lender, b.Lender))
			})
			h := core.Holding{Job: j.id, Share: s.name, Loans: ls}
			for _, u := range j.units {
				n := j.demand[u]
				for _, l := range ls {
					if l.Unit == u {
						n -= l.Count
					}
				}
				if n > 0 {
					h.Own = append(h.Own, core.UnitCount{Unit: u, Count: n})
				}
			}
			out = append(out, h)
		}
	}
	return out
}

// refLenderCmp: by name, the capacity beyond all share limits ("") last.
func refLenderCmp(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	return cmp.Compare(a, b)
}

// queueUnits lists every unit a queue's shares limit or its jobs need.
func (r *refCore) queueUnits(q *refQueue) []string {
	all := map[string]int{}
	for _, s := range r.sharesOf(q.name) {
		for u := range s.limits {
			all[u] = 1
		}
		for _, j := range r.jobsOf(s) {
			for u := range j.demand {
				all[u] = 1
			}
		}
	}
	return units(all)
}

// lentBy is how much of u each share of the queue lends, by the
// attribution, and how much stands on the capacity beyond all limits.
func (r *refCore) lentBy(q *refQueue, u string) (map[*refShare]int, int) {
	lent, unowned := map[*refShare]int{}, 0
	for _, l := range r.loans(q, u) {
		if l.lender == nil {
			unowned += l.n
		} else {
			lent[l.lender] += l.n
		}
	}
	return lent, unowned
}

// withReserved adds to a reason the free idle capacity of u that RESERVE
// shares other than s keep.
func (r *refCore) withReserved(why core.Reason, s *refShare, u string) core.Reason {
	e := r.envOf(s)
	kept := 0
	for _, o := range r.poolShares(e) {
		if o != s && o.strategy == core.Reserve {
			kept += r.ownIdle(o, u)
		}
	}
	if n := min(kept, r.seFree(e, u)); n > 0 {
		why.IdleCount = n
		for _, o := range r.poolShares(e) {
			if o != s && o.strategy == core.Reserve && r.ownIdle(o, u) > 0 {
				if why.IdleSources++; why.IdleSources == 1 {
					why.IdleFrom = o.name
				}
			}
		}
	}
	return why
}

// withLendable adds to a reason the free idle capacity of u that s could
// borrow if its strategy or borrow limit allowed.
func (r *refCore) withLendable(why core.Reason, s *refShare, u string) core.Reason {
	n := min(r.lendableTo(s, u), r.free(s, u))
	if n <= 0 {
		return why
	}
	why.IdleCount = n
	q := r.queueOf(s)
	lent, unowned := r.lentBy(q, u)
	for _, o := range r.sharesOf(q.name) {
		if o != s && lends(o) && r.ownIdle(o, u) > lent[o] {
			if why.IdleSources++; why.IdleSources == 1 {
				why.IdleFrom = o.name
			}
		}
	}
	if r.beyondLimits(r.envOf(s), u) > unowned {
		if why.IdleSources++; why.IdleSources == 1 {
			why.IdleFrom = ""
		}
	}
	return why
}
