package core

import "slices"

// jobSet is an ordered set of jobs kept as a list of sorted chunks of at
// most maxChunk pointers. Insert and Delete cost two binary searches and a
// short copy; Min is O(1); At and Rank walk the chunk lengths. Chunks keep
// neighbouring jobs together in memory, which beats a pointer tree at the
// sizes a share's queue reaches (10^3 to 10^6 jobs).
//
// A job's ordering fields must not change while it is in a set: callers
// delete it, change it, and insert it again.
type jobSet struct {
	chunks [][]*job
	n      int
	less   func(a, b *job) bool
}

const maxChunk = 128

func newJobSet(less func(a, b *job) bool, _ *uint64) jobSet {
	return jobSet{less: less}
}

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
	ci := s.chunkFor(j)
	c := s.chunks[ci]
	c = slices.Insert(c, s.pos(c, j), j)
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
