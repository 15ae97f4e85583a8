package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// pool is one capacity unit of one queue's service environment: the
// instances its shares use, own, borrow and lend, integrated over time.
type pool struct {
	queue, env, unit string
	capacity         int
	gpus             int          // per instance
	shares           []*poolShare // by name, as the core orders them
	last             time.Duration
	used             float64 // instance-seconds
}

// poolShare is one share's standing in a pool.
type poolShare struct {
	name     string
	strategy string
	limit    int
	use      int
	// area holds the own, borrowed and lent integrals in instance-seconds;
	// series the same per time bucket.
	area   [3]float64
	series [3][]float64
	// events counts dispatches, preemptions that requeued a job and
	// preemptions that failed one, per time bucket.
	events [3][]float64
	// Preemptions.
	lost                float64 // instance-seconds lost to preemption
	crossShare, inShare int
	exhausted           int
}

// newPools makes a pool per (quota-share queue, capacity unit of its
// environment); a FIFO queue has one nameless share holding everything.
func newPools(cfg *clusterconfig.Config) []*pool {
	var out []*pool
	for qi := range cfg.JobQueues {
		q := &cfg.JobQueues[qi]
		se := cfg.Env(q.ServiceEnvironments[0])
		for _, l := range se.CapacityLimits {
			p := &pool{queue: q.Name, env: se.Name, unit: l.CapacityUnit, capacity: l.MaxCapacity, gpus: trainingjob.GPUs(l.CapacityUnit)}
			if !cfg.QuotaQueue(q) {
				p.shares = []*poolShare{{strategy: "FIFO", limit: l.MaxCapacity}}
			}
			for _, s := range q.QuotaShares {
				ps := &poolShare{name: s.Name, strategy: s.ResourceSharingConfiguration.Strategy}
				for _, sl := range s.CapacityLimits {
					if sl.CapacityUnit == l.CapacityUnit {
						ps.limit = sl.MaxCapacity
					}
				}
				p.shares = append(p.shares, ps)
			}
			slices.SortFunc(p.shares, func(a, b *poolShare) int { return strings.Compare(a.name, b.name) })
			out = append(out, p)
		}
	}
	return out
}

func (p *pool) share(name string) *poolShare {
	i, ok := slices.BinarySearchFunc(p.shares, name, func(s *poolShare, n string) int { return strings.Compare(s.name, n) })
	if !ok {
		return nil
	}
	return p.shares[i]
}

// lender tells whether a share lends its idle capacity: LEND and
// LEND_AND_BORROW do, RESERVE never does.
func (s *poolShare) lender() bool {
	return s.strategy == "LEND" || s.strategy == "LEND_AND_BORROW"
}

// flush integrates the pool's standing from its last change until now.
// Borrowed capacity is lent first by the environment's capacity beyond the
// share limits, then by lending shares in name order, as core.Usage
// attributes it.
func (p *pool) flush(now time.Duration, ts *timeSeries) {
	dt := now - p.last
	if dt <= 0 {
		return
	}
	from := p.last
	p.last = now
	sec := dt.Seconds()
	sumLimit, borrowed, used := 0, 0, 0
	for _, s := range p.shares {
		sumLimit += s.limit
		borrowed += max(0, s.use-s.limit)
		used += s.use
	}
	if used == 0 {
		return
	}
	p.used += float64(used) * sec
	lentLeft := max(0, borrowed-max(0, p.capacity-sumLimit))
	for _, s := range p.shares {
		own := min(s.use, s.limit)
		if s.strategy == "FIFO" || s.strategy == fairStrategy {
			own = s.use
		}
		b := s.use - own
		lent := 0
		if s.lender() {
			lent = min(max(0, s.limit-s.use), lentLeft)
			lentLeft -= lent
		}
		for k, v := range [3]int{own, b, lent} {
			if v == 0 {
				continue
			}
			s.area[k] += float64(v) * sec
			ts.add(&s.series[k], from, now, float64(v))
		}
	}
}

// timeSeries places integrals in buckets of equal width. When time runs
// past the last bucket, pairs of buckets merge and the width doubles, so a
// run of unknown length keeps between n/2 and n buckets.
type timeSeries struct {
	width time.Duration
	n     int
	all   []*[]float64 // every series, to merge together
}

func newTimeSeries(horizon time.Duration, n int) *timeSeries {
	return &timeSeries{width: max(time.Millisecond, horizon/time.Duration(n)+1), n: n}
}

// add spreads value × time over [from, to) into the buckets of s.
func (ts *timeSeries) add(s *[]float64, from, to time.Duration, value float64) {
	for to > ts.width*time.Duration(ts.n) {
		ts.merge()
	}
	ts.alloc(s)
	for b := from / ts.width; b*ts.width < to; b++ {
		lo, hi := max(from, b*ts.width), min(to, (b+1)*ts.width)
		(*s)[b] += value * (hi - lo).Seconds()
	}
}

// count adds one event at the instant at to the buckets of s.
func (ts *timeSeries) count(s *[]float64, at time.Duration) {
	for at >= ts.width*time.Duration(ts.n) {
		ts.merge()
	}
	ts.alloc(s)
	(*s)[at/ts.width]++
}

// alloc makes a series on its first value, so that a series nothing was
// added to stays nil.
func (ts *timeSeries) alloc(s *[]float64) {
	if *s == nil {
		*s = make([]float64, ts.n)
		ts.all = append(ts.all, s)
	}
}

func (ts *timeSeries) merge() {
	for _, s := range ts.all {
		v := *s
		for i := 0; i < ts.n/2; i++ {
			v[i] = v[2*i] + v[2*i+1]
		}
		clear(v[ts.n/2:])
	}
	ts.width *= 2
}

// Kinds of capacity a share's area and series hold.
const (
	kindOwn = iota
	kindBorrowed
	kindLent
)

// Kinds of events a share's events hold.
const (
	eventDispatched = iota
	eventPreempted  // and requeued
	eventFailed     // by a preemption: the job's retries were exhausted
)
