package usage

import (
	"cmp"
	"slices"
)

// Attempt names a dispatched attempt and what its usage is reported by.
type Attempt struct {
	ID, Job, Queue, Share, ShareID, Owner string
}

// Tracker follows the holdings of live attempts and cuts them into
// segments. It also keeps running totals since it was made, for counters.
// It is not safe for concurrent use.
type Tracker struct {
	live   map[string]*live
	closed map[CounterKey]Amount
	// Indexes of live: by job, by share, and those holding borrowed
	// capacity, so that a caller rechecks only what may have changed.
	byJob     map[string]string
	byShare   map[ShareKey]map[string]*live
	borrowing map[string]*live
	free      []*live // ended, for the next attempts to reuse
}

// ShareKey names a share: its queue and name.
type ShareKey struct{ Queue, Share string }

// live is an attempt the Tracker follows: its open segments and the
// totals of its closed ones (for the preempted counter).
type live struct {
	a     Attempt
	parts []Part
	open  []Segment
	next  int // the next segment's Seq
	held  Amount
	// borrowing tells whether parts hold borrowed capacity (as indexed).
	borrowing bool
}

// CounterKey labels a running total.
type CounterKey struct {
	Queue, Share, Kind string
}

// Amount is instance- and GPU-milliseconds.
type Amount struct {
	InstanceMillis, GPUMillis int64
}

func (a *Amount) add(s *Segment, stop int64) {
	d := max(0, stop-s.Start)
	a.InstanceMillis += d * int64(s.Instances)
	a.GPUMillis += d * int64(s.GPUs)
}

// NewTracker returns a Tracker following no attempt.
func NewTracker() *Tracker {
	return &Tracker{live: map[string]*live{}, closed: map[CounterKey]Amount{},
		byJob: map[string]string{}, byShare: map[ShareKey]map[string]*live{}, borrowing: map[string]*live{}}
}

// Hold records that attempt a holds parts from at (epoch ms) on. When they
// differ from what it held, its open segments close at at and new ones
// open; Hold returns the segments to write, closed and opened.
func (t *Tracker) Hold(a Attempt, parts []Part, at int64) []Segment {
	return t.AppendHold(nil, a, parts, at)
}

// AppendHold is Hold appending the segments to dst, so a caller that
// gathers a cycle's segments reuses one buffer.
func (t *Tracker) AppendHold(dst []Segment, a Attempt, parts []Part, at int64) []Segment {
	l := t.live[a.ID]
	if l == nil {
		l = t.follow(a)
	} else if slices.Equal(l.parts, parts) {
		return dst
	}
	dst = t.closeOpen(dst, l, at)
	l.parts = append(l.parts[:0], parts...)
	t.noteBorrowing(l)
	for _, p := range parts {
		s := Segment{Attempt: a.ID, Seq: l.next, Job: a.Job, Queue: a.Queue, Share: a.Share, ShareID: a.ShareID, Owner: a.Owner,
			Kind: p.Kind, Peer: p.Peer, Instances: p.Instances, GPUs: p.GPUs, Start: at}
		l.next++
		l.open = append(l.open, s)
		dst = append(dst, s)
	}
	return dst
}

// follow begins following attempt a.
func (t *Tracker) follow(a Attempt) *live {
	var l *live
	if n := len(t.free); n > 0 {
		l, t.free = t.free[n-1], t.free[:n-1]
		l.a = a
	} else {
		l = &live{a: a}
	}
	t.live[a.ID] = l
	t.byJob[a.Job] = a.ID
	k := ShareKey{a.Queue, a.Share}
	m := t.byShare[k]
	if m == nil {
		m = map[string]*live{}
		t.byShare[k] = m
	}
	m[a.ID] = l
	return l
}

// forget stops following attempt l.
func (t *Tracker) forget(l *live) {
	delete(t.live, l.a.ID)
	if t.byJob[l.a.Job] == l.a.ID {
		delete(t.byJob, l.a.Job)
	}
	k := ShareKey{l.a.Queue, l.a.Share}
	m := t.byShare[k]
	delete(m, l.a.ID)
	if len(m) == 0 {
		delete(t.byShare, k)
	}
	delete(t.borrowing, l.a.ID)
}

// noteBorrowing keeps the index of borrowers up to date with l's parts,
// touching it only when l starts or stops borrowing.
func (t *Tracker) noteBorrowing(l *live) {
	b := slices.ContainsFunc(l.parts, func(p Part) bool { return p.Kind == Borrowed })
	if b == l.borrowing {
		return
	}
	l.borrowing = b
	if b {
		t.borrowing[l.a.ID] = l
	} else {
		delete(t.borrowing, l.a.ID)
	}
}

// Parts returns what attempt id holds as the Tracker last heard, nil when
// not followed.
func (t *Tracker) Parts(id string) []Part {
	if l := t.live[id]; l != nil {
		return slices.Clone(l.parts)
	}
	return nil
}

// AttemptOfJob returns the attempt of job followed, "" when none.
func (t *Tracker) AttemptOfJob(job string) string { return t.byJob[job] }

// AttemptsOfShare calls fn with the job and attempt of every attempt of a
// share followed.
func (t *Tracker) AttemptsOfShare(queue, share string, fn func(job, attempt string)) {
	for id, l := range t.byShare[ShareKey{queue, share}] {
		fn(l.a.Job, id)
	}
}

// Borrowing calls fn with the job, queue and share of every attempt
// followed that holds borrowed capacity.
func (t *Tracker) Borrowing(fn func(job, queue, share string)) {
	for _, l := range t.borrowing {
		a := l.a
		fn(a.Job, a.Queue, a.Share)
	}
}

// closeOpen closes l's open segments at at (never before they began),
// appending them to dst.
func (t *Tracker) closeOpen(dst []Segment, l *live, at int64) []Segment {
	for _, s := range l.open {
		s.Stop = max(at, s.Start)
		dst = append(dst, s)
		t.count(&s, s.Stop)
		l.held.add(&s, s.Stop)
	}
	l.open = l.open[:0]
	return dst
}

// count adds a closed segment to the running totals: those of
// counterKeys, without making its slice.
func (t *Tracker) count(s *Segment, stop int64) {
	add := func(k CounterKey) {
		a := t.closed[k]
		a.add(s, stop)
		t.closed[k] = a
	}
	add(CounterKey{Queue: s.Queue, Share: s.Share, Kind: s.Kind})
	if s.Kind == Borrowed && s.Peer != "" {
		add(CounterKey{Queue: s.Queue, Share: s.Peer, Kind: Lent})
	}
}

// counterKeys are the totals a segment counts in: its share's kind, and
// the lender's Lent.
func counterKeys(s *Segment) []CounterKey {
	ks := []CounterKey{{Queue: s.Queue, Share: s.Share, Kind: s.Kind}}
	if s.Kind == Borrowed && s.Peer != "" {
		ks = append(ks, CounterKey{Queue: s.Queue, Share: s.Peer, Kind: Lent})
	}
	return ks
}

// End closes attempt id's segments at at and forgets it; preempted tells
// whether a preemption ended it. It returns the closed segments (marked
// Preempted when so), nil for an attempt it does not follow.
func (t *Tracker) End(id string, at int64, preempted bool) []Segment {
	return t.AppendEnd(nil, id, at, preempted)
}

// AppendEnd is End appending the closed segments to dst.
func (t *Tracker) AppendEnd(dst []Segment, id string, at int64, preempted bool) []Segment {
	l := t.live[id]
	if l == nil {
		return dst
	}
	t.forget(l)
	n := len(dst)
	dst = t.closeOpen(dst, l, at)
	if preempted {
		for i := n; i < len(dst); i++ {
			dst[i].Preempted = true
		}
		k := CounterKey{Queue: l.a.Queue, Share: l.a.Share, Kind: Preempted}
		a := t.closed[k]
		a.InstanceMillis += l.held.InstanceMillis
		a.GPUMillis += l.held.GPUMillis
		t.closed[k] = a
	}
	clear(l.parts)
	*l = live{parts: l.parts[:0], open: l.open[:0]}
	t.free = append(t.free, l)
	return dst
}

// Resume follows again an open segment written before a restart: the
// attempt holds it still, from its Start.
func (t *Tracker) Resume(s Segment) {
	l := t.live[s.Attempt]
	if l == nil {
		l = t.follow(Attempt{ID: s.Attempt, Job: s.Job, Queue: s.Queue, Share: s.Share, ShareID: s.ShareID, Owner: s.Owner})
	}
	s.Stop = 0
	l.open = append(l.open, s)
	l.parts = append(l.parts, Part{Kind: s.Kind, Peer: s.Peer, Instances: s.Instances, GPUs: s.GPUs})
	l.next = max(l.next, s.Seq+1)
	slices.SortFunc(l.parts, func(a, b Part) int { return cmp.Or(kindOrder(a.Kind)-kindOrder(b.Kind), cmp.Compare(a.Peer, b.Peer)) })
	t.noteBorrowing(l)
}

// Holds tells whether the Tracker follows attempt id, and whether it holds
// parts already (a Hold of them would change nothing).
func (t *Tracker) Holds(id string, parts []Part) (followed, same bool) {
	l := t.live[id]
	if l == nil {
		return false, false
	}
	return true, slices.Equal(l.parts, parts)
}

// Attempt returns attempt id as followed, false when not followed.
func (t *Tracker) Attempt(id string) (Attempt, bool) {
	if l := t.live[id]; l != nil {
		return l.a, true
	}
	return Attempt{}, false
}

// Follows tells whether the Tracker follows attempt id.
func (t *Tracker) Follows(id string) bool { return t.live[id] != nil }

// Live returns the IDs of the attempts followed, sorted.
func (t *Tracker) Live() []string {
	out := make([]string, 0, len(t.live))
	for id := range t.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Counter is a running total of one share and kind.
type Counter struct {
	CounterKey
	Amount
}

// Counters returns the totals since the Tracker was made: closed segments,
// and open ones up to now (epoch ms), by queue, share and kind.
func (t *Tracker) Counters(now int64) []Counter {
	sum := make(map[CounterKey]Amount, len(t.closed))
	for k, a := range t.closed {
		sum[k] = a
	}
	for _, l := range t.live {
		for i := range l.open {
			for _, k := range counterKeys(&l.open[i]) {
				a := sum[k]
				a.add(&l.open[i], now)
				sum[k] = a
			}
		}
	}
	out := make([]Counter, 0, len(sum))
	for k, a := range sum {
		out = append(out, Counter{k, a})
	}
	slices.SortFunc(out, func(a, b Counter) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Share, b.Share), kindOrder(a.Kind)-kindOrder(b.Kind))
	})
	return out
}
