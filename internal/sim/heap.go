package sim

import "time"

// evKind is what a simulation event does.
type evKind uint8

const (
	evRunning evKind = iota + 1 // an attempt's instances are up: STARTING, RUNNING
	evEnd                       // an attempt's work is done: SUCCEEDED
	evStopped                   // a stopped attempt reports it: STOPPED
	evTick                      // engine housekeeping
	evWake                      // a minimum runtime that held a preemption back ends: a cycle
)

// event is one entry of the simulation's queue. The trace's submissions
// and changes are not queued: they are read from sorted lists alongside.
type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	att  *attempt
}

// eventHeap is a binary min-heap ordered by (at, seq): no two events tie,
// so the order is total and the run deterministic.
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = event{}
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s.less(l, m) {
			m = l
		}
		if r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
