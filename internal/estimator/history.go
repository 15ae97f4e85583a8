package estimator

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/record"
)

// The run times of recently succeeded attempts, per share and per job
// shape (the share and the capacity asked for), from dispatch to end: how
// long a job held its capacity. They stand for the run time of a job that
// declares no bound. They are kept in memory only: after a restart they
// fill again as jobs end.

// runSamples is how many recent run times are kept per share and shape.
const runSamples = 64

// maxShapes bounds the shapes remembered; past it they are forgotten and
// learned again.
const maxShapes = 4096

// minShapeSamples is how many run times a shape needs to stand for its
// jobs; with fewer, the share's stand for them.
const minShapeSamples = 3

type runTimes struct {
	ms   [runSamples]int64
	n    int // samples held
	next int // where the next one goes
}

func (r *runTimes) add(ms int64) {
	r.ms[r.next] = ms
	r.next = (r.next + 1) % runSamples
	r.n = min(r.n+1, runSamples)
}

// samples returns a copy of the samples.
func (r *runTimes) samples() []int64 { return slices.Clone(r.ms[:r.n]) }

// runHistory is written by the engine's cycles (add) and read by the
// computations (snapshot); mu keeps them apart, each for as long as it
// copies a few arrays.
type runHistory struct {
	mu      sync.Mutex
	byShare map[string]*runTimes
	byShape map[string]*runTimes
}

func newRunHistory() *runHistory {
	return &runHistory{byShare: map[string]*runTimes{}, byShape: map[string]*runTimes{}}
}

func shareKey(queue, share string) string { return string(appendShareKey(nil, queue, share)) }

func shapeKey(queue, share string, demand []record.UnitCount) string {
	return string(appendShape(appendShareKey(nil, queue, share), demand))
}

func appendShareKey(b []byte, queue, share string) []byte {
	return append(append(append(b, queue...), 0), share...)
}

// appendShape adds the demand to a share's key: its shape's key.
func appendShape(b []byte, demand []record.UnitCount) []byte {
	for _, u := range demand {
		b = append(append(append(b, 0), u.Unit...), ':')
		b = strconv.AppendInt(b, int64(u.Count), 10)
	}
	return b
}

// add records that a job of the share and shape held its capacity for d.
// Its keys are built on the stack: a job's end would otherwise allocate
// two strings only to look them up.
func (h *runHistory) add(queue, share string, demand []record.UnitCount, d time.Duration) {
	if d <= 0 {
		return
	}
	ms := max(d.Milliseconds(), 1)
	at := func(m map[string]*runTimes, k []byte) *runTimes {
		r := m[string(k)]
		if r == nil {
			r = &runTimes{}
			m[string(k)] = r
		}
		return r
	}
	var buf [128]byte
	k := appendShareKey(buf[:0], queue, share)
	h.mu.Lock()
	defer h.mu.Unlock()
	at(h.byShare, k).add(ms)
	if len(h.byShape) >= maxShapes {
		clear(h.byShape)
	}
	at(h.byShape, appendShape(k, demand)).add(ms)
}

// historySnapshot is a copy of the history, sorted, for a computation to
// read while the cycles add to the history.
type historySnapshot struct {
	byShare map[string][]int64
	byShape map[string][]int64
}

// snapshot copies the samples under the lock and sorts them after it.
func (h *runHistory) snapshot() historySnapshot {
	s := h.copySamples()
	for _, xs := range s.byShare {
		slices.Sort(xs)
	}
	for _, xs := range s.byShape {
		slices.Sort(xs)
	}
	return s
}

func (h *runHistory) copySamples() historySnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := historySnapshot{byShare: make(map[string][]int64, len(h.byShare)), byShape: make(map[string][]int64, len(h.byShape))}
	for k, r := range h.byShare {
		s.byShare[k] = r.samples()
	}
	for k, r := range h.byShape {
		s.byShape[k] = r.samples()
	}
	return s
}

// samples returns the run times that stand for a job: its shape's when
// there are enough, else its share's; nil when there are none.
func (s historySnapshot) samples(queue, share string, demand []record.UnitCount) []int64 {
	if xs := s.byShape[shapeKey(queue, share, demand)]; len(xs) >= minShapeSamples {
		return xs
	}
	return s.byShare[shareKey(queue, share)]
}

// medianAbove is the median of the sorted samples longer than ms, and
// whether there is one: for a job that has run ms already, the run times
// of the jobs like it that ran longer.
func medianAbove(sorted []int64, ms int64) (int64, bool) {
	i, _ := slices.BinarySearch(sorted, ms+1)
	rest := sorted[i:]
	if len(rest) == 0 {
		return 0, false
	}
	return rest[len(rest)/2], true
}
