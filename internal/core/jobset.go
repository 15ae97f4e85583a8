package core

import "slices"

// jobSet is an ordered set of jobs kept as a list of sorted chunks of at
// most maxChunk pointers. Insert and Delete cost two binary searches and a
// short copy; Min is O(1); At and Rank walk the chunk lengths. Chunks keep
// neighbouring jobs together in memory, which beats a pointer tree at the
// sizes a share's queue reaches (10^3 to 10^6 jobs).
//
// Jobs mostly leave a queue at its head and join it at its tail: both
// skip the searches.
//
// A job's ordering fields must not change while it is in a set: callers
// delete it, change it, and insert it again.
type jobSet struct {
	chunks [][]*job
	n      int
	order  order
}

const maxChunk = 128

// order is how a jobSet orders its jobs. A value, not a func, so that the
// comparisons inline into the searches.
type order uint8

const (
	queueOrder    order = iota // queueLess
	fifoOrder                  // fifoLess
	dispatchOrder              // dispatchLess
)

func (o order) less(a, b *job) bool {
	switch o {
	case queueOrder:
		return queueLess(a, b)
	case fifoOrder:
		return fifoLess(a, b)
	}
	return dispatchLess(a, b)
}

func newJobSet(o order) jobSet {
	return jobSet{order: o}
}

func (s *jobSet) less(a, b *job) bool { return s.order.less(a, b) }

func (s *jobSet) Len() int { return s.n }

// chunkFor returns the index of the chunk where j belongs: the first whose
// last job is not ordered before j, or the last chunk.
func (s *jobSet) chunkFor(j *job) int {
	i, _ := slices.BinarySearchFunc(s.chunks, j, func(c []*job, j *job) int {
		if s.less(c[len(c)-1], j) {
			return -1
		}
		return 1
	})
	return min(i, len(s.chunks)-1)
}

// pos returns the index in chunk c of the first job not ordered before j.
func (s *jobSet) pos(c []*job, j *job) int {
	i, _ := slices.BinarySearchFunc(c, j, func(x, j *job) int {
		if s.less(x, j) {
			return -1
		}
		return 1
	})
	return i
}

// Insert adds j, which must not be in the set.
func (s *jobSet) Insert(j *job) {
	s.n++
	if len(s.chunks) == 0 {
		c := make([]*job, 1, maxChunk)
		c[0] = j
		s.chunks = append(s.chunks, c)
		return
	}
	ci := len(s.chunks) - 1
	c := s.chunks[ci]
	if s.less(j, c[len(c)-1]) {
		ci = s.chunkFor(j)
		c = s.chunks[ci]
		c = slices.Insert(c, s.pos(c, j), j)
	} else if len(c) < maxChunk {
		c = append(c, j) // the tail: no search
	} else {
		c = make([]*job, 1, maxChunk)
		c[0] = j
		s.chunks = append(s.chunks, c)
		return
	}
	if len(c) <= maxChunk {
		s.chunks[ci] = c
		return
	}
	// Split in halves; each half gets its own backing array.
	half := len(c) / 2
	right := make([]*job, len(c)-half, maxChunk)
	copy(right, c[half:])
	clear(c[half:])
	s.chunks[ci] = c[:half]
	s.chunks = slices.Insert(s.chunks, ci+1, right)
}

// Delete removes j, which must be in the set.
func (s *jobSet) Delete(j *job) {
	if s.n == 0 {
		panic("core: jobSet.Delete from an empty set: " + j.id)
	}
	if first := s.chunks[0]; first[0] == j {
		// The head: drop it from the front of its chunk without a copy.
		s.n--
		first[0] = nil
		if len(first) > 1 {
			s.chunks[0] = first[1:]
		} else {
			s.chunks = slices.Delete(s.chunks, 0, 1)
		}
		return
	}
	ci := s.chunkFor(j)
	c := s.chunks[ci]
	i := s.pos(c, j)
	if i == len(c) || c[i] != j {
		panic("core: jobSet.Delete of a job not in the set: " + j.id)
	}
	s.n--
	c = slices.Delete(c, i, i+1)
	if len(c) > 0 {
		s.chunks[ci] = c
		return
	}
	s.chunks = slices.Delete(s.chunks, ci, ci+1)
}

// Min returns the first job, or nil.
func (s *jobSet) Min() *job {
	if s.n == 0 {
		return nil
	}
	return s.chunks[0][0]
}

// At returns the job of rank i (0-based), or nil.
func (s *jobSet) At(i int) *job {
	if i < 0 {
		return nil
	}
	for _, c := range s.chunks {
		if i < len(c) {
			return c[i]
		}
		i -= len(c)
	}
	return nil
}

// Rank returns how many jobs are ordered before j, which must be in s.
func (s *jobSet) Rank(j *job) int {
	ci := s.chunkFor(j)
	r := 0
	for _, c := range s.chunks[:ci] {
		r += len(c)
	}
	c := s.chunks[ci]
	i := s.pos(c, j)
	if i == len(c) || c[i] != j {
		panic("core: jobSet.Rank of a job not in the set: " + j.id)
	}
	return r + i
}

// Each calls fn for the jobs in order until fn returns false.
func (s *jobSet) Each(fn func(*job) bool) {
	for _, c := range s.chunks {
		for _, j := range c {
			if !fn(j) {
				return
			}
		}
	}
}

// EachReverse calls fn for the jobs in reverse order until fn returns false.
func (s *jobSet) EachReverse(fn func(*job) bool) {
	for ci := len(s.chunks) - 1; ci >= 0; ci-- {
		c := s.chunks[ci]
		for i := len(c) - 1; i >= 0; i-- {
			if !fn(c[i]) {
				return
			}
		}
	}
}
