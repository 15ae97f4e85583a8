package core

import (
	"cmp"
	"slices"
)

// Whose capacity a dispatched job holds. A share's dispatched jobs in
// dispatch order fill its limit and are own; the rest borrow (spec 2.1).
// Capacity is fungible, so which lender a borrowed instance comes from is
// an attribution, chosen to tell people what is at risk:
//
//   - How much each share lends: borrowed instances stand first on the
//     service environment's capacity beyond all share limits (a reclaim
//     only happens when free capacity is short, so nobody takes it back),
//     the rest on shares' idle capacity: lenders before RESERVE shares
//     (whose idle capacity holds borrowers only after a configuration
//     change), and within each, shares whose head waits to reclaim the
//     unit first, by name.
//   - Which job borrows from whom: the borrowers, least exposed first
//     (the reverse of victim order), take the capacity nobody owns, then
//     the shares that do not reclaim, then those that do, by name within
//     each. So the jobs labelled "reclaimable by QS2" are those a reclaim
//     preempts first.

// Loan is part of a dispatched job's capacity of one unit that lies beyond
// its share's limit, and whose capacity it stands on.
type Loan struct {
	Unit  string
	Count int
	// Lender is the share whose idle capacity the instances are; empty for
	// the service environment's capacity beyond all share limits.
	Lender string
	// Reclaimable tells that the lender has a waiting head that needs the
	// unit and fits its own limits: it takes the capacity back (cross-share
	// preemption) as soon as its own use leaves room for that job.
	Reclaimable bool
}

// Holding is a dispatched job and whose capacity it holds.
type Holding struct {
	Job   string
	Share string
	Own   []UnitCount // within its share's limit (all of it in a FIFO queue)
	Loans []Loan      // beyond it: by unit, then in the lenders' order
}

// ShareCount is some instances of one unit that one share lends to or
// borrows from another.
type ShareCount struct {
	// Share is the other share; empty for the capacity beyond all share
	// limits.
	Share       string
	Count       int
	Reclaimable bool // see Loan.Reclaimable; for borrowed capacity only
}

// reclaims tells whether share l's head could take back lent capacity of
// unit u: it needs u and fits l's limits on every unit, so it never has to
// borrow and reclaims once l's own jobs leave it room.
func (l *share) reclaims(u int32) bool {
	h := l.head()
	if h == nil || h.uses(u) == 0 {
		return false
	}
	for _, d := range h.needs() {
		if int(d.n) > l.limit[d.u] {
			return false
		}
	}
	return true
}

// source is capacity that borrowed instances of a unit stand on: a share's
// idle capacity, or (s nil) the capacity beyond all share limits.
type source struct {
	s       *share
	n       int
	reclaim bool
}

func (src source) name() string {
	if src.s == nil {
		return ""
	}
	return src.s.name
}

// sources lists what the borrowed instances of unit u in quota queue q
// stand on, in the order the borrowers take them, least exposed first:
// the capacity beyond all share limits, then shares that do not reclaim u,
// then those that do. Shares hold the borrowed instances beyond the
// capacity nobody owns, each up to its idle capacity, filled in this
// order: 1) lenders that reclaim u, 2) other lenders, 3) RESERVE shares
// that reclaim u, 4) other RESERVE shares, each group by name.
func sources(q *queue, u int32) []source {
	e := q.env
	total := e.borrowed[u]
	if total <= 0 || !q.quota {
		return nil
	}
	want := max(0, total-max(0, e.limit[u]-e.sumLimit[u]))
	left := want
	var out []source
	if n := total - want; n > 0 {
		out = append(out, source{n: n})
	}
	for tier := 0; tier < 4 && left > 0; tier++ {
		for _, s := range q.shares {
			rec := s.reclaims(u)
			if s.lender() != (tier < 2) || rec != (tier%2 == 0) {
				continue
			}
			if n := min(left, s.ownIdle(u)); n > 0 {
				out = append(out, source{s: s, n: n, reclaim: rec})
				left -= n
			}
		}
	}
	if left > 0 {
		// In use beyond the SE limit (lowered under use): nobody's.
		if len(out) > 0 && out[0].s == nil {
			out[0].n += left
		} else {
			out = slices.Insert(out, 0, source{n: left})
		}
	}
	// Shares by name within each tier; reclaiming ones last.
	slices.SortStableFunc(out, func(a, b source) int {
		return cmp.Or(boolFirst(a.s == nil, b.s == nil), boolFirst(b.reclaim, a.reclaim), boolFirst(a.s != nil && a.s.lender(), b.s != nil && b.s.lender()))
	})
	return out
}

// boolFirst orders true before false.
func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// loanPart is what one dispatched job borrows of a unit.
type loanPart struct {
	j *job
	n int
}

// borrowersOf lists the jobs of quota queue q that borrow unit u, with how
// much, least exposed first (the reverse of victim order). Within a share
// they are the last jobs using u in dispatch order; the first of them may
// borrow part.
func borrowersOf(q *queue, u int32) []loanPart {
	var out []loanPart
	for _, s := range q.shares {
		over := s.borrowedOf(u)
		if over == 0 {
			continue
		}
		s.dispatched.EachReverse(func(j *job) bool {
			if n := min(j.uses(u), over); n > 0 {
				out = append(out, loanPart{j: j, n: n})
				over -= n
			}
			return over > 0
		})
	}
	slices.SortFunc(out, func(a, b loanPart) int {
		switch {
		case victimLess(b.j, a.j):
			return -1
		case victimLess(a.j, b.j):
			return 1
		}
		return 0
	})
	return out
}

// matchLoans matches the borrowers of unit u in quota queue q with the
// sources, calling fn for each piece in order.
func matchLoans(q *queue, u int32, fn func(j *job, src source, n int)) {
	srcs := sources(q, u)
	i, left := 0, 0
	if len(srcs) > 0 {
		left = srcs[0].n
	}
	for _, p := range borrowersOf(q, u) {
		for need := p.n; need > 0; {
			if left == 0 {
				i++
				if i >= len(srcs) {
					panic("core: borrowed instances beyond their sources")
				}
				left = srcs[i].n
			}
			n := min(need, left)
			fn(p.j, srcs[i], n)
			need -= n
			left -= n
		}
	}
}

// Holdings reports every dispatched job of a queue and whose capacity it
// holds, by share name, then dispatch order.
func (c *Core) Holdings(queue string) []Holding {
	q := c.queues[queue]
	if q == nil {
		return nil
	}
	loans := c.queueLoans(q)
	var out []Holding
	for _, s := range q.shares {
		s.dispatched.Each(func(j *job) bool {
			out = append(out, c.holdingOf(j, loans[j]))
			return true
		})
	}
	return out
}

// HoldingsOf reports whose capacity the named jobs hold, for those that
// are dispatched, by job ID. Each queue's borrowed capacity is attributed
// once: O(borrowing jobs · log) per queue, plus O(1) per job.
func (c *Core) HoldingsOf(ids []string) map[string]Holding {
	out := make(map[string]Holding, len(ids))
	loans := map[*queue]map[*job][]Loan{}
	for _, id := range ids {
		j := c.lookup(id)
		if j == nil || j.state != dispatched {
			continue
		}
		l, ok := loans[j.sh.q]
		if !ok {
			l = c.queueLoans(j.sh.q)
			loans[j.sh.q] = l
		}
		out[id] = c.holdingOf(j, l[j])
	}
	return out
}

// queueLoans attributes every borrowed instance of a quota queue.
func (c *Core) queueLoans(q *queue) map[*job][]Loan {
	out := map[*job][]Loan{}
	if !q.quota {
		return out
	}
	for u := range c.units {
		if q.env.borrowed[u] == 0 {
			continue
		}
		matchLoans(q, int32(u), func(j *job, src source, n int) {
			out[j] = addLoan(out[j], c.units[u], src, n)
		})
	}
	return out
}

// addLoan adds n instances of unit from src to a job's loans, merging with
// the last loan when it is the same.
func addLoan(ls []Loan, unit string, src source, n int) []Loan {
	if k := len(ls) - 1; k >= 0 && ls[k].Unit == unit && ls[k].Lender == src.name() {
		ls[k].Count += n
		return ls
	}
	return append(ls, Loan{Unit: unit, Count: n, Lender: src.name(), Reclaimable: src.reclaim})
}

// holdingOf completes a job's holding: what it does not borrow is own.
// Loans are sorted by unit, then lender (the capacity beyond all share
// limits last).
func (c *Core) holdingOf(j *job, loans []Loan) Holding {
	slices.SortStableFunc(loans, func(a, b Loan) int {
		return cmp.Or(cmp.Compare(a.Unit, b.Unit), lenderCmp(a.Lender, b.Lender))
	})
	h := Holding{Job: j.id, Share: j.sh.name, Loans: loans}
	for _, d := range j.needs() {
		n := int(d.n)
		for _, l := range loans {
			if l.Unit == c.units[d.u] {
				n -= l.Count
			}
		}
		if n > 0 {
			h.Own = append(h.Own, UnitCount{Unit: c.units[d.u], Count: n})
		}
	}
	return h
}

// lenderCmp orders shares by name with the capacity beyond all share
// limits ("") last.
func lenderCmp(a, b string) int {
	if (a == "") != (b == "") {
		if a == "" {
			return 1
		}
		return -1
	}
	return cmp.Compare(a, b)
}

// addShareCount adds n to the count of share name in cs.
func addShareCount(cs []ShareCount, name string, n int, reclaim bool) []ShareCount {
	for i := range cs {
		if cs[i].Share == name {
			cs[i].Count += n
			return cs
		}
	}
	return append(cs, ShareCount{Share: name, Count: n, Reclaimable: reclaim})
}
