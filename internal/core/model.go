package core

// need is an amount of one unit, by the unit's interned index.
type need struct {
	u int32
	n int32
}

type jobState uint8

const (
	runnable   jobState = iota + 1 // feasible, waiting in its share's order
	infeasible                     // RUNNABLE, but can never be placed as configured
	dispatched                     // SCHEDULED, STARTING or RUNNING: holds capacity
)

// A job holds as few pointers as it can: the garbage collector follows
// each one in every cycle, a million times over with a million jobs. It
// is two cache lines: the first holds what the cycle's passes and a job's
// end read, the second what they rarely do.
type job struct {
	sh           *share
	one          [1]need // the demand of one unit
	heldAt       uint64  // the instant (Core.instant) of its last preemption
	queuedAt     int64
	dispatchedAt int64
	idKey        uint64 // see idKeyOf
	prio         int32
	gen          uint32 // how many jobs left this slot before it: see Handle
	hash         uint32 // idHash(id)
	state        jobState
	removed      bool       // tentatively removed while choosing victims
	why          ReasonCode // why it is infeasible

	id        string
	more      []need // the demand of more than one unit, else nil
	retries   int32  // preemptionRetriesBeforeTermination; -1 unset
	preempted int32
	slot      uint32 // where it lies in Core.slabs
	// whyLimit is, for ReasonEnvMaxResource, the environment's limit of
	// the unit the job needs more of; a change of it is reported again.
	whyLimit int32
	// wakeSet: Core.wakes holds the end of its current protection (see
	// minruntime.go).
	wakeSet bool
	_       [7]byte
}

// Handle names a live job by where it lies in the core, so that the caller
// who keeps it finds the job again without a lookup of its ID in a map of
// a million. A slot's generation counts the jobs that left it, so a handle
// kept past its job's end finds nothing. The zero Handle names no job.
type Handle uint64

func (j *job) handle() Handle { return Handle(uint64(j.gen)<<32 | uint64(j.slot+1)) }

// idKeyOf is the first 8 bytes of a job ID, big-endian, zero-padded. Keys
// order as their IDs do wherever they differ, so most ties broken by ID are
// decided without reading the IDs, which lie elsewhere in memory.
func idKeyOf(id string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(id) {
			k |= uint64(id[i])
		}
	}
	return k
}

// idLess orders jobs by ID.
func idLess(a, b *job) bool {
	if a.idKey != b.idKey {
		return a.idKey < b.idKey
	}
	return a.id < b.id
}

// needs is the job's demand, sorted by unit name, no duplicates.
func (j *job) needs() []need {
	if j.more != nil {
		return j.more
	}
	return j.one[:]
}

// uses reports how many instances of unit u the job needs.
func (j *job) uses(u int32) int {
	for _, d := range j.needs() {
		if d.u == u {
			return int(d.n)
		}
	}
	return 0
}

// queueLess orders a share's RUNNABLE jobs: 1) priority desc, 2) queue time
// asc, 3) job ID.
func queueLess(a, b *job) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.queuedAt != b.queuedAt {
		return a.queuedAt < b.queuedAt
	}
	return idLess(a, b)
}

// fifoLess orders a FIFO queue's RUNNABLE jobs: 1) queue time asc, 2) job
// ID. schedulingPriority plays no part without a quota-share policy.
func fifoLess(a, b *job) bool {
	if a.queuedAt != b.queuedAt {
		return a.queuedAt < b.queuedAt
	}
	return idLess(a, b)
}

// dispatchLess orders a share's dispatched jobs: 1) priority desc, 2)
// dispatch time asc, 3) job ID. The first fill the share's limit and are
// own; the rest borrow. Its reverse is the victim order.
func dispatchLess(a, b *job) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.dispatchedAt != b.dispatchedAt {
		return a.dispatchedAt < b.dispatchedAt
	}
	return idLess(a, b)
}

// victimLess orders preemption victims: 1) lower priority, 2) most recently
// dispatched, 3) job ID.
func victimLess(a, b *job) bool {
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	if a.dispatchedAt != b.dispatchedAt {
		return a.dispatchedAt > b.dispatchedAt
	}
	return idLess(a, b)
}

// env is a service environment: one pool of capacity. Its quota-share queue
// (at most one) or FIFO queues draw from it. Slices are indexed by unit.
type env struct {
	name     string
	disabled bool
	limit    []int
	queues   []*queue // by name
	quota    bool     // its queue schedules by quota share
	// minShares counts its shares with a minimum runtime: without one, no
	// job of the pool is ever protected.
	minShares int

	use         []int // held by dispatched jobs
	sumLimit    []int // Σ limit(s) over all shares
	lenderLimit []int // Σ limit(s) over LEND and LEND_AND_BORROW shares
	reserveIdle []int // Σ ownIdle(s) over RESERVE shares
	lenderIdle  []int // Σ ownIdle(s) over LEND and LEND_AND_BORROW shares
	borrowed    []int // Σ borrowed(s) over all shares

	// waiting[kind][u] are the clean shares whose head needs u, by what
	// could place it (wake.go); touched are units whose capacity may have
	// grown since the pool last settled.
	waiting     [waitKinds][][]*share
	candidates  []int // per unit: the shares in waiting with inShareCandidate
	touched     []bool
	touchedList []int32
	dirty       []*share
	spare       []*share // the other dirty list, swapped in by settle
	queued      bool     // in Core.dirtyEnvs
}

type queue struct {
	name     string
	env      *env
	quota    bool
	prio     int
	disabled bool
	shares   []*share // by name; a FIFO queue has one unnamed share

	// fair is the fair-share policy; its shares are share identifiers.
	fair *fairPolicy
	// res caches fairReserve for resActive active identifiers at
	// configuration resGen.
	res       []int
	resActive int
	resGen    uint64
	resValid  bool
}

type share struct {
	q           *queue
	name        string
	limit       []int
	strategy    Strategy // 0 for a FIFO queue's share
	borrowLimit int
	inShare     bool
	disabled    bool
	minRuntime  int64 // ns; 0: its dispatched jobs are never protected

	use        []int
	runnable   jobSet // feasible RUNNABLE jobs, queueLess
	infeasible jobSet // queueLess
	dispatched jobSet // dispatchLess

	dirty    bool
	waitKind waitKind
	// inShareCandidate: its head could preempt lower-priority jobs of the
	// share (pass 4), so any capacity change may help it.
	inShareCandidate bool
	waitOn           []int32 // units it is filed under in env.waiting
	waitPos          []int   // its index in each of those lists
	lastWait         Reason  // the reason last reported for lastHead
	lastHead         *job

	// A fair-share identifier's weightFactor and decayed usage
	// (instance-seconds) as of usageAt; held is what it held since.
	weight  float64
	usage   float64
	usageAt int64
	held    int
}

func (s *share) lender() bool { return s.strategy == Lend || s.strategy == LendAndBorrow }

func (s *share) ownIdle(u int32) int { return max(0, s.limit[u]-s.use[u]) }

func (s *share) borrowedOf(u int32) int { return max(0, s.use[u]-s.limit[u]) }

// borrowCap is how many instances of u the share may borrow; -1 is no cap.
func (s *share) borrowCap(u int32) int {
	if s.strategy != LendAndBorrow {
		return 0
	}
	if s.borrowLimit < 0 {
		return -1
	}
	return s.limit[u] * s.borrowLimit / 100
}

// head is the share's first feasible RUNNABLE job, or nil.
func (s *share) head() *job { return s.runnable.Min() }
