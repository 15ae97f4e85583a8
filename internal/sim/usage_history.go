package sim

import (
	"math"

	"github.com/sharq-dev/sharq/internal/usage"
)

// usageLog sums the usage segments the engine writes as the server's
// history would: it keeps each live attempt's segments until the attempt
// ends (when its last open one closes and none opens), then adds them,
// marked when the attempt was preempted, to one report over the whole run.
// Only live attempts are kept, so a long trace costs no more memory.
type usageLog struct {
	rep  *usage.Report
	live map[string]*attemptSegs
	// Kept from cycle to cycle: the attempts a cycle touched, and those
	// ended, whose buffers the next attempts reuse.
	touched []*attemptSegs
	free    []*attemptSegs
}

type attemptSegs struct {
	id        string
	segs      []usage.Segment // by Seq
	open      int
	preempted bool
	touched   bool // in usageLog.touched
}

// Usage keeps a committed cycle's usage segments.
func (c *collector) Usage(segs []usage.Segment, preempted []string) {
	l := &c.usage
	if l.rep == nil {
		l.rep = usage.NewReport(usage.Query{From: math.MinInt64 / 2, To: math.MaxInt64 / 2, By: usage.ByShare}, 0)
		l.live = map[string]*attemptSegs{}
	}
	touched := l.touched[:0]
	for _, s := range segs {
		a := l.live[s.Attempt]
		if a == nil {
			a = l.alloc(s.Attempt)
			l.live[s.Attempt] = a
		}
		if !a.touched {
			a.touched = true
			touched = append(touched, a)
		}
		for len(a.segs) < s.Seq { // a gap: never, unless segments come resumed
			a.segs = append(a.segs, usage.Segment{})
		}
		if s.Seq < len(a.segs) {
			if a.segs[s.Seq].Stop == 0 && s.Stop > 0 {
				a.open--
			}
			a.segs[s.Seq] = s
			continue
		}
		a.segs = append(a.segs, s)
		if s.Stop == 0 {
			a.open++
		}
	}
	for _, id := range preempted {
		if a := l.live[id]; a != nil {
			a.preempted = true
		}
	}
	for i, a := range touched {
		touched[i] = nil
		a.touched = false
		if a.open > 0 {
			continue
		}
		for _, s := range a.segs {
			s.Preempted = s.Preempted || a.preempted
			l.rep.Add(s)
		}
		delete(l.live, a.id)
		clear(a.segs)
		*a = attemptSegs{segs: a.segs[:0]}
		l.free = append(l.free, a)
	}
	l.touched = touched[:0]
}

// alloc returns an empty attemptSegs for attempt id, reusing one ended.
func (l *usageLog) alloc(id string) *attemptSegs {
	if n := len(l.free); n > 0 {
		a := l.free[n-1]
		l.free = l.free[:n-1]
		a.id = id
		return a
	}
	return &attemptSegs{id: id}
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

// usageReport adds the attempts still holding capacity at the end (epoch
// ms) and returns each share's use over the run.
func (c *collector) usageReport(end int64) []UsageRow {
	l := &c.usage
	if l.rep == nil {
		return nil
	}
	for _, a := range l.live {
		for _, s := range a.segs {
			if s.Stop == 0 {
				s.Stop = max(end, s.Start)
			}
			l.rep.Add(s)
		}
	}
	l.live = map[string]*attemptSegs{}
	var out []UsageRow
	for _, r := range l.rep.Rows() {
		out = append(out, UsageRow{Queue: r.Queue, Share: r.Key, Kind: r.Kind, Peer: r.Peer,
			InstanceHours: round(float64(r.InstanceMillis) / 3600e3), GPUHours: round(float64(r.GPUMillis) / 3600e3)})
	}
	return out
}
