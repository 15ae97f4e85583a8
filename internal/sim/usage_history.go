package sim

import (
	"github.com/sharq-dev/sharq/internal/usage"
)

// usageKey is a segment's key.
type usageKey struct {
	attempt string
	seq     int
}

// usageLog keeps the usage segments the engine writes, as a store would:
// the later of a key replaces the earlier, and a preempted attempt's
// segments are all marked.
type usageLog struct {
	segs      map[usageKey]usage.Segment
	preempted map[string]bool
}

// ObserveUsage keeps a committed cycle's usage segments.
func (c *collector) ObserveUsage(segs []usage.Segment, preempted []string) {
	l := &c.usage
	if l.segs == nil {
		l.segs, l.preempted = map[usageKey]usage.Segment{}, map[string]bool{}
	}
	for _, s := range segs {
		l.segs[usageKey{s.Attempt, s.Seq}] = s
	}
	for _, a := range preempted {
		l.preempted[a] = true
	}
}

// UsageRow is one share's use of one kind of capacity over the whole run,
// as `sharq usage --by share` reports it: own, borrowed (from Peer), lent
// (to Peer), or preempted (the part of own and borrowed held by attempts
// that were later preempted). Peer "" is the capacity beyond all share
// limits.
type UsageRow struct {
	Queue         string  `json:"queue"`
	Share         string  `json:"share"`
	Kind          string  `json:"kind"`
	Peer          string  `json:"peer,omitempty"`
	InstanceHours float64 `json:"instanceHours"`
	GPUHours      float64 `json:"gpuHours"`
}

// usageReport sums the segments over the run, from the first submission
// to end, with the accounting the server's usage history uses.
func (c *collector) usageReport(end int64) []UsageRow {
	from := Epoch.Add(c.first).UnixMilli()
	q := usage.Query{From: from, To: max(end, from+1), By: usage.ByShare}
	rep := usage.NewReport(q, end)
	for _, s := range c.usage.segs {
		s.Preempted = s.Preempted || c.usage.preempted[s.Attempt]
		rep.Add(s)
	}
	var out []UsageRow
	for _, r := range rep.Rows() {
		out = append(out, UsageRow{Queue: r.Queue, Share: r.Key, Kind: r.Kind, Peer: r.Peer,
			InstanceHours: round(float64(r.InstanceMillis) / 3600e3), GPUHours: round(float64(r.GPUMillis) / 3600e3)})
	}
	return out
}
