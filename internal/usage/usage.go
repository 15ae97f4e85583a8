// Package usage accounts for the capacity attempts held over time: which
// share's capacity (own, or borrowed from which share), how many instances
// and GPUs, and whether the attempt was later preempted. The engine, the
// simulator and the reports share it, so a GPU-second is counted one way
// everywhere.
//
// An attempt holds capacity from its dispatch until the core releases it.
// The Tracker cuts that interval into segments, one per part of a holding
// that did not change, closing them all whenever the holding changes (a
// borrowed instance becoming own when the share's other jobs end, a lender
// changing). The segments of an attempt therefore cover its interval once:
// their sum is exact to the millisecond.
package usage

import (
	"cmp"
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Kinds of capacity. Own and Borrowed are held by attempts; Lent is the
// lender's side of Borrowed; Preempted is the part of Own and Borrowed
// held by attempts that were later preempted.
const (
	Own       = "own"
	Borrowed  = "borrowed"
	Lent      = "lent"
	Preempted = "preempted"
)

// Segment is capacity one attempt held of one kind over [Start, Stop).
type Segment = store.UsageSegment

// Part is some capacity of one kind an attempt holds.
type Part struct {
	Kind      string // Own or Borrowed
	Peer      string // Borrowed: the lender; "" for capacity beyond all share limits
	Instances int
	GPUs      int
}

// Parts turns a core holding into parts: one Own part, and one Borrowed
// part per lender, instances of every unit together, GPUs from the
// instance-type table.
func Parts(h core.Holding) []Part { return AppendParts(nil, h) }

// AppendParts is Parts appending to dst, so a caller reuses one buffer.
func AppendParts(dst []Part, h core.Holding) []Part {
	n := len(dst)
	for _, u := range h.Own {
		dst = addPart(dst, n, Own, "", u.Unit, u.Count)
	}
	for _, l := range h.Loans {
		dst = addPart(dst, n, Borrowed, l.Lender, l.Unit, l.Count)
	}
	if len(dst)-n > 1 {
		slices.SortFunc(dst[n:], func(a, b Part) int { return cmp.Or(kindOrder(a.Kind)-kindOrder(b.Kind), cmp.Compare(a.Peer, b.Peer)) })
	}
	return dst
}

// addPart adds n instances of unit to the part of dst[from:] of kind and
// peer, or a new one.
func addPart(dst []Part, from int, kind, peer, unit string, n int) []Part {
	g := n * trainingjob.GPUs(unit)
	for i := from; i < len(dst); i++ {
		if dst[i].Kind == kind && dst[i].Peer == peer {
			dst[i].Instances += n
			dst[i].GPUs += g
			return dst
		}
	}
	return append(dst, Part{Kind: kind, Peer: peer, Instances: n, GPUs: g})
}

// OwnOf is the parts of a holding all within its share's limit: one Own
// part of every unit's instances, as Parts makes it.
func OwnOf(units []record.UnitCount) []Part { return AppendOwnOf(nil, units) }

// AppendOwnOf is OwnOf appending to dst.
func AppendOwnOf(dst []Part, units []record.UnitCount) []Part {
	p := Part{Kind: Own}
	for _, u := range units {
		p.Instances += u.Count
		p.GPUs += u.Count * trainingjob.GPUs(u.Unit)
	}
	if p.Instances == 0 {
		return dst
	}
	return append(dst, p)
}

// kindOrder orders kinds in reports.
func kindOrder(k string) int {
	switch k {
	case Own:
		return 0
	case Borrowed:
		return 1
	case Lent:
		return 2
	}
	return 3
}
