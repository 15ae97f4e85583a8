package core

// jobSet is an ordered set of jobs: a treap with subtree sizes, so that
// insert, delete, minimum, rank and select cost O(log n). It is intrusive:
// the links live in the job, so a job can be in one jobSet at a time (its
// share's runnable, infeasible or dispatched set). Node priorities come from
// a deterministic generator, so equal operation sequences build equal trees.
type jobSet struct {
	root *job
	min  *job // cached: a share's head is asked for far more often than it changes
	less func(a, b *job) bool
	rng  *uint64
}

// treap links embedded in job.
type node struct {
	left, right *job
	pri         uint32
	size        uint32
}

func newJobSet(less func(a, b *job) bool, rng *uint64) jobSet {
	return jobSet{less: less, rng: rng}
}

func size(j *job) uint32 {
	if j == nil {
		return 0
	}
	return j.size
}

func (j *job) fix() { j.size = 1 + size(j.left) + size(j.right) }

// nextPri is xorshift64*: deterministic, cheap, well spread.
func (s *jobSet) nextPri() uint32 {
	x := *s.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*s.rng = x
	return uint32((x * 2685821657736338717) >> 32)
}

func (s *jobSet) Len() int { return int(size(s.root)) }

// split cuts t into the jobs ordered before j and the rest.
func (s *jobSet) split(t, j *job) (l, r *job) {
	if t == nil {
		return nil, nil
	}
	if s.less(t, j) {
		t.right, r = s.split(t.right, j)
		t.fix()
		return t, r
	}
	l, t.left = s.split(t.left, j)
	t.fix()
	return l, t
}

func merge(l, r *job) *job {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.pri > r.pri:
		l.right = merge(l.right, r)
		l.fix()
		return l
	default:
		r.left = merge(l, r.left)
		r.fix()
		return r
	}
}

// Insert adds j, which must not be in any set.
func (s *jobSet) Insert(j *job) {
	j.left, j.right, j.size = nil, nil, 1
	j.pri = s.nextPri()
	s.root = s.insert(s.root, j)
	if s.min == nil || s.less(j, s.min) {
		s.min = j
	}
}

func (s *jobSet) insert(t, j *job) *job {
	if t == nil {
		return j
	}
	if j.pri > t.pri {
		j.left, j.right = s.split(t, j)
		j.fix()
		return j
	}
	if s.less(j, t) {
		t.left = s.insert(t.left, j)
	} else {
		t.right = s.insert(t.right, j)
	}
	t.fix()
	return t
}

// Delete removes j, which must be in s.
func (s *jobSet) Delete(j *job) {
	s.root = s.delete(s.root, j)
	j.left, j.right, j.size = nil, nil, 0
	if s.min == j {
		s.min = s.leftmost()
	}
}

func (s *jobSet) delete(t, j *job) *job {
	if t == nil {
		panic("core: jobSet.Delete of a job not in the set " + j.id)
	}
	if t == j {
		return merge(t.left, t.right)
	}
	if s.less(j, t) {
		t.left = s.delete(t.left, j)
	} else {
		t.right = s.delete(t.right, j)
	}
	t.fix()
	return t
}

// Min returns the first job, or nil.
func (s *jobSet) Min() *job { return s.min }

func (s *jobSet) leftmost() *job {
	t := s.root
	if t == nil {
		return nil
	}
	for t.left != nil {
		t = t.left
	}
	return t
}

// At returns the job of rank i (0-based), or nil.
func (s *jobSet) At(i int) *job {
	t := s.root
	for t != nil {
		l := int(size(t.left))
		switch {
		case i < l:
			t = t.left
		case i == l:
			return t
		default:
			i -= l + 1
			t = t.right
		}
	}
	return nil
}

// Rank returns how many jobs are ordered before j, which must be in s.
func (s *jobSet) Rank(j *job) int {
	r, t := 0, s.root
	for t != nil {
		if t == j {
			return r + int(size(t.left))
		}
		if s.less(j, t) {
			t = t.left
		} else {
			r += int(size(t.left)) + 1
			t = t.right
		}
	}
	panic("core: jobSet.Rank of a job not in the set " + j.id)
}

// Each calls fn for the jobs in order until fn returns false.
func (s *jobSet) Each(fn func(*job) bool) { each(s.root, fn) }

func each(t *job, fn func(*job) bool) bool {
	for t != nil {
		if !each(t.left, fn) || !fn(t) {
			return false
		}
		t = t.right
	}
	return true
}

// EachReverse calls fn for the jobs in reverse order until fn returns false.
func (s *jobSet) EachReverse(fn func(*job) bool) { eachReverse(s.root, fn) }

func eachReverse(t *job, fn func(*job) bool) bool {
	for t != nil {
		if !eachReverse(t.right, fn) || !fn(t) {
			return false
		}
		t = t.left
	}
	return true
}
