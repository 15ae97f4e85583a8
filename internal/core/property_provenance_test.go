package core_test

import (
	"fmt"

	"github.com/sharq-dev/sharq/internal/core"
)

// checkHoldings checks that whose capacity each dispatched job holds is
// consistent with the model's state and with the queue's usage:
//   - every dispatched job has one holding; own and borrowed add up to its
//     demand, and it borrows only from other shares;
//   - per share and unit, its jobs' own instances are its Own, their
//     borrowed ones its Borrowed, split by lender as BorrowedFrom says;
//   - per lender and unit, what its jobs' loans name it for is its Lent,
//     split by borrower as LentTo says, and never more than its idle
//     capacity; Lent + Idle is its idle capacity;
//   - what stands on no share's capacity fits the capacity beyond all share
//     limits (or beyond the SE limit, when it was lowered under use);
//   - a loan is reclaimable exactly when its lender's head needs the unit
//     and fits the lender's limits;
//   - the most exposed borrowers (victim order) stand on reclaiming
//     lenders first, then on other shares, and the least exposed on the
//     capacity nobody owns.
func checkHoldings(c *core.Core, m *refCore, q *refQueue) error {
	type key struct{ share, unit string }
	own, bor := map[key]int{}, map[key]int{}
	from, lentTo := map[key]map[string]int{}, map[key]map[string]int{}
	unowned := map[string]int{}
	// Per unit, the loans in victim order of their jobs: 0 reclaimable,
	// 1 another share's, 2 nobody's.
	type rank struct {
		j    *refJob
		kind int
	}
	order := map[string][]rank{}
	seen := map[string]bool{}
	for _, h := range c.Holdings(q.name) {
		j := m.job(h.Job)
		if j == nil || !j.dispatched || j.share != h.Share || seen[h.Job] {
			return fmt.Errorf("holding %+v: not a dispatched job of its share (or twice)", h)
		}
		seen[h.Job] = true
		got := map[string]int{}
		for _, o := range h.Own {
			got[o.Unit] += o.Count
			own[key{h.Share, o.Unit}] += o.Count
		}
		for _, l := range h.Loans {
			got[l.Unit] += l.Count
			k := key{h.Share, l.Unit}
			bor[k] += l.Count
			if from[k] == nil {
				from[k] = map[string]int{}
			}
			from[k][l.Lender] += l.Count
			kind := 1
			switch {
			case l.Lender == h.Share || l.Count <= 0:
				return fmt.Errorf("job %s borrows %d %s from %q", h.Job, l.Count, l.Unit, l.Lender)
			case l.Lender == "":
				unowned[l.Unit] += l.Count
				kind = 2
				if l.Reclaimable {
					return fmt.Errorf("job %s: capacity beyond all share limits marked reclaimable", h.Job)
				}
			default:
				lk := key{l.Lender, l.Unit}
				if lentTo[lk] == nil {
					lentTo[lk] = map[string]int{}
				}
				lentTo[lk][h.Share] += l.Count
				if want := m.reclaims(m.share(q.name, l.Lender), l.Unit); l.Reclaimable != want {
					return fmt.Errorf("job %s: loan from %s reclaimable=%v, want %v", h.Job, l.Lender, l.Reclaimable, want)
				}
				if l.Reclaimable {
					kind = 0
				}
			}
			order[l.Unit] = append(order[l.Unit], rank{j, kind})
		}
		if fmt.Sprint(got) != fmt.Sprint(j.demand) {
			return fmt.Errorf("job %s holds %v (own %v, loans %v), needs %v", h.Job, got, h.Own, h.Loans, j.demand)
		}
	}
	for _, j := range m.jobs {
		if j.queue == q.name && j.dispatched && !seen[j.id] {
			return fmt.Errorf("dispatched job %s has no holding", j.id)
		}
	}
	for _, su := range c.Usage(q.name) {
		s := m.share(q.name, su.Share)
		for _, uu := range su.Units {
			k := key{su.Share, uu.Unit}
			if s.strategy == 0 {
				continue // a FIFO queue's jobs hold no loans
			}
			if own[k] != uu.Own || bor[k] != uu.Borrowed {
				return fmt.Errorf("share %s %s: jobs hold own %d borrowed %d, usage says own %d borrowed %d", su.Share, uu.Unit, own[k], bor[k], uu.Own, uu.Borrowed)
			}
			if err := sameCounts("borrowed from", k.share, uu.BorrowedFrom, from[k]); err != nil {
				return err
			}
			if err := sameCounts("lent to", k.share, uu.LentTo, lentTo[k]); err != nil {
				return err
			}
			lent := 0
			for _, n := range lentTo[k] {
				lent += n
			}
			idle := m.ownIdle(s, uu.Unit)
			if lent != uu.Lent || lent > idle || uu.Lent+uu.Idle != idle || uu.Idle < 0 {
				return fmt.Errorf("share %s %s: lends %d by its loans; usage lent %d idle %d; idle capacity %d", su.Share, uu.Unit, lent, uu.Lent, uu.Idle, idle)
			}
		}
	}
	e := m.env(q.env)
	for u, n := range unowned {
		over := -m.seFree(e, u) // instances in use beyond the SE limit
		if n > m.beyondLimits(e, u)+max(0, over) {
			return fmt.Errorf("%d %s stand on no share's capacity; only %d lie beyond the share limits", n, u, m.beyondLimits(e, u))
		}
	}
	for u, rs := range order {
		for _, a := range rs {
			for _, b := range rs {
				if a.kind < b.kind && victimOrder(a.j, b.j) > 0 {
					return fmt.Errorf("unit %s: %s (kind %d) is less exposed than %s (kind %d)", u, a.j.id, a.kind, b.j.id, b.kind)
				}
			}
		}
	}
	return nil
}

// sameCounts compares a usage split with the counts the loans give.
func sameCounts(what, share string, got []core.ShareCount, want map[string]int) error {
	sum := map[string]int{}
	for _, c := range got {
		sum[c.Share] += c.Count
	}
	if len(want) == 0 && len(sum) == 0 {
		return nil
	}
	if fmt.Sprint(sum) != fmt.Sprint(want) {
		return fmt.Errorf("share %s %s %v, its loans say %v", share, what, got, want)
	}
	return nil
}
