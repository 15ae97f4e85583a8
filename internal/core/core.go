package core

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"sort"
)

// Bad input. Apply wraps these with the details.
var (
	ErrInvalid  = errors.New("invalid")
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// MaxPriority is the highest schedulingPriority.
const MaxPriority = 9999

// Core is the quota-share scheduler. It is not safe for concurrent use;
// the engine owns it. Equal event sequences give byte-equal decisions.
type Core struct {
	envs   map[string]*env
	queues map[string]*queue
	ids    idTable // the live jobs by ID

	units   []string // interned unit names
	unitIdx map[string]int32

	instant    uint64 // counts the distinct instants Step has run at
	now        int64
	dirtyEnvs  []*env
	stepped    []*env      // the pools the last Step ran; its list is the next dirtyEnvs
	pending    []Decision  // decided by Apply (deletions), reported by the next Step
	bufs       [4][]*job   // scratch lists of heads, reused by every cycle
	out        []Decision  // what Step returns, reused by the next Step
	unitOut    []UnitCount // the Own and Borrowed lists of out
	newInfeas  []*job      // jobs that became infeasible, reported by the next Step
	fairQueues int         // how many queues are fair-share queues: with none, no usage to keep

	slabs    []*[jobSlab]job // where jobs are allocated (newJob); nil in a copy where none was live
	slabLive []int32         // live jobs per slab
	slots    uint32          // how many slots of slabs were handed out
	freeJobs []*job          // slots of jobs that left, reused first

	warmed int64 // sums what warm reads, so that its reads are kept

	reconfigs uint64 // configuration changes applied (Reconfigurations)

	wakes wakeHeap // ends of protections that held a preemption back
}

// New returns an empty core.
func New() *Core {
	return &Core{
		envs:    map[string]*env{},
		queues:  map[string]*queue{},
		unitIdx: map[string]int32{},
	}
}

func invalid(format string, args ...any) error {
	return refused(ErrInvalid, format, args...)
}

// Apply applies one event. A bad event returns an *Error of kind
// ErrInvalid, ErrNotFound or ErrConflict and changes nothing.
func (c *Core) Apply(ev Event) error {
	switch e := ev.(type) {
	case PutEnv:
		return c.putEnv(e)
	case DeleteEnv:
		return c.deleteEnv(e)
	case PutQueue:
		return c.putQueue(e)
	case DeleteQueue:
		return c.deleteQueue(e)
	case PutShare:
		return c.putShare(e)
	case DeleteShare:
		return c.deleteShare(e)
	case Submit:
		return c.submit(e, false, 0)
	case Restore:
		return c.submit(e.Submit, true, e.DispatchedAt)
	case SetPriority:
		return c.setPriority(e)
	case Terminate:
		return c.terminate(e)
	case AttemptEnded:
		return c.attemptEnded(e)
	case SetUsage:
		return c.setUsage(e)
	case nil:
		return invalid("nil event")
	}
	// Only the type: passing ev itself to fmt would make every event
	// escape to the heap at every call of Apply.
	return invalid("unknown event %v", reflect.TypeOf(ev))
}

// unit interns a unit name, growing every per-unit slice when it is new.
func (c *Core) unit(name string) int32 {
	if u, ok := c.unitIdx[name]; ok {
		return u
	}
	u := int32(len(c.units))
	c.units = append(c.units, name)
	c.unitIdx[name] = u
	for _, e := range c.envs {
		e.grow(len(c.units))
	}
	return u
}

func (e *env) grow(n int) {
	for _, p := range []*[]int{&e.limit, &e.use, &e.sumLimit, &e.lenderLimit, &e.reserveIdle, &e.lenderIdle, &e.borrowed} {
		*p = growInts(*p, n)
	}
	for k := range e.waiting {
		for len(e.waiting[k]) < n {
			e.waiting[k] = append(e.waiting[k], nil)
		}
	}
	for len(e.touched) < n {
		e.touched = append(e.touched, false)
	}
	e.candidates = growInts(e.candidates, n)
	for _, q := range e.queues {
		for _, s := range q.shares {
			s.limit = growInts(s.limit, n)
			s.use = growInts(s.use, n)
		}
	}
}

func growInts(s []int, n int) []int {
	for len(s) < n {
		s = append(s, 0)
	}
	return s
}

// checkUnits validates a list of capacity amounts.
func checkUnits(what string, us []UnitCount, minCount int) error {
	seen := map[string]bool{}
	for _, u := range us {
		if u.Unit == "" {
			return invalid("%s: capacity unit is empty", what)
		}
		if u.Count < minCount {
			return invalid("%s: %s count %d is below %d", what, u.Unit, u.Count, minCount)
		}
		if seen[u.Unit] {
			return invalid("%s: capacity unit %s is listed twice", what, u.Unit)
		}
		seen[u.Unit] = true
	}
	return nil
}

// limitsOf turns capacity amounts into a per-unit slice.
func (c *Core) limitsOf(us []UnitCount) []int {
	for _, u := range us {
		c.unit(u.Unit)
	}
	l := make([]int, len(c.units))
	for _, u := range us {
		l[c.unitIdx[u.Unit]] = u.Count
	}
	return l
}

func (c *Core) putEnv(ev PutEnv) error {
	if ev.Name == "" {
		return invalid("service environment name is empty")
	}
	if err := checkUnits("service environment "+ev.Name, ev.Limits, 0); err != nil {
		return err
	}
	e := c.envs[ev.Name]
	if e == nil {
		e = &env{name: ev.Name}
		c.envs[ev.Name] = e
		e.grow(len(c.units))
	}
	e.limit = c.limitsOf(ev.Limits)
	e.disabled = ev.Disabled
	c.reconfigure(e)
	return nil
}

func (c *Core) deleteEnv(ev DeleteEnv) error {
	e := c.envs[ev.Name]
	if e == nil {
		return refused(ErrNotFound, "service environment %s", ev.Name)
	}
	if len(e.queues) > 0 {
		return refused(ErrConflict, "service environment %s is used by job queue %s", e.name, e.queues[0].name)
	}
	delete(c.envs, ev.Name)
	return nil
}

func (c *Core) putQueue(ev PutQueue) error {
	if ev.Name == "" {
		return invalid("job queue name is empty")
	}
	e := c.envs[ev.Env]
	if e == nil {
		return refused(ErrNotFound, "service environment %s", ev.Env)
	}
	var fair *fairPolicy
	if ev.Fair != nil {
		if ev.QuotaShares {
			return invalid("job queue %s: a scheduling policy has quota shares or a fair-share policy, not both", ev.Name)
		}
		var err error
		if fair, err = compileFair(ev.Fair); err != nil {
			return err
		}
	}
	q := c.queues[ev.Name]
	if q != nil && q.quota != ev.QuotaShares {
		return refused(ErrConflict, "job queue %s cannot switch between quota shares and FIFO", q.name)
	}
	if q != nil && (q.fair != nil) != (fair != nil) {
		return refused(ErrConflict, "job queue %s cannot switch between fair share and FIFO", q.name)
	}
	for _, o := range e.queues {
		if o != q && (ev.QuotaShares || o.quota || fair != nil || o.fair != nil) {
			return refused(ErrConflict, "service environment %s already serves job queue %s", e.name, o.name)
		}
	}
	if q != nil && q.env != e {
		if q.hasJobs() {
			return refused(ErrConflict, "job queue %s has jobs; its service environment cannot change", q.name)
		}
		old := q.env
		old.queues = slices.DeleteFunc(old.queues, func(x *queue) bool { return x == q })
		old.quota = false
		c.reconfigure(old)
		q.env = nil
	}
	if q == nil {
		q = &queue{name: ev.Name, quota: ev.QuotaShares, fair: fair}
		c.queues[ev.Name] = q
		if fair != nil {
			c.fairQueues++
		}
		if !ev.QuotaShares && fair == nil {
			q.shares = []*share{c.newShare(q, "")}
		}
	}
	if q.env == nil {
		q.env = e
		e.queues = append(e.queues, q)
		slices.SortFunc(e.queues, func(a, b *queue) int { return cmp.Compare(a.name, b.name) })
		e.quota = ev.QuotaShares
		for _, s := range q.shares {
			s.limit = growInts(s.limit, len(c.units))
			s.use = growInts(s.use, len(c.units))
		}
	}
	q.prio, q.disabled = ev.Priority, ev.Disabled
	if fair != nil {
		// The policy may be replaced: weights follow it, usage stays.
		q.fair, q.resValid = fair, false
		for _, s := range q.shares {
			s.weight = fair.weightOf(s.name)
		}
	}
	c.reconfigure(e)
	return nil
}

func (q *queue) hasJobs() bool {
	for _, s := range q.shares {
		if s.runnable.Len()+s.infeasible.Len()+s.dispatched.Len() > 0 {
			return true
		}
	}
	return false
}

func (c *Core) newShare(q *queue, name string) *share {
	order := queueOrder
	if !q.quota && q.fair == nil {
		order = fifoOrder
	}
	return &share{
		q: q, name: name,
		limit:      make([]int, len(c.units)),
		use:        make([]int, len(c.units)),
		runnable:   newJobSet(order),
		infeasible: newJobSet(order),
		dispatched: newJobSet(dispatchOrder),
	}
}

func (c *Core) deleteQueue(ev DeleteQueue) error {
	q := c.queues[ev.Name]
	if q == nil {
		return refused(ErrNotFound, "job queue %s", ev.Name)
	}
	if !q.disabled {
		return refused(ErrConflict, "job queue %s must be DISABLED before it is deleted", q.name)
	}
	for _, s := range q.shares {
		c.failAll(s, ReasonQueueDeleted)
	}
	e := q.env
	e.queues = slices.DeleteFunc(e.queues, func(x *queue) bool { return x == q })
	if len(e.queues) == 0 {
		e.quota = false
	}
	delete(c.queues, q.name)
	if q.fair != nil {
		c.fairQueues--
	}
	c.reconfigure(e)
	return nil
}

func (c *Core) putShare(ev PutShare) error {
	q := c.queues[ev.Queue]
	if q == nil {
		return refused(ErrNotFound, "job queue %s", ev.Queue)
	}
	if !q.quota {
		return refused(ErrConflict, "job queue %s has no quota share scheduling policy", q.name)
	}
	if ev.Name == "" {
		return invalid("quota share name is empty")
	}
	if err := checkUnits("quota share "+ev.Name, ev.Limits, 0); err != nil {
		return err
	}
	if ev.Strategy < Reserve || ev.Strategy > LendAndBorrow {
		return invalid("quota share %s: unknown strategy %d", ev.Name, ev.Strategy)
	}
	if ev.BorrowLimit < UnlimitedBorrow {
		return invalid("quota share %s: borrowLimit %d is below -1", ev.Name, ev.BorrowLimit)
	}
	if ev.MinRuntime < 0 {
		return invalid("quota share %s: minimum runtime %v is negative", ev.Name, ev.MinRuntime)
	}
	s := q.share(ev.Name)
	if s == nil {
		s = c.newShare(q, ev.Name)
		q.shares = append(q.shares, s)
		slices.SortFunc(q.shares, func(a, b *share) int { return cmp.Compare(a.name, b.name) })
	}
	s.limit = c.limitsOf(ev.Limits)
	s.strategy, s.borrowLimit = ev.Strategy, ev.BorrowLimit
	s.inShare, s.disabled = ev.InSharePreemption, ev.Disabled
	c.setMinRuntime(s, int64(ev.MinRuntime))
	c.reconfigure(q.env)
	return nil
}

func (q *queue) share(name string) *share {
	i, ok := slices.BinarySearchFunc(q.shares, name, func(s *share, n string) int { return cmp.Compare(s.name, n) })
	if !ok {
		return nil
	}
	return q.shares[i]
}

func (c *Core) deleteShare(ev DeleteShare) error {
	q := c.queues[ev.Queue]
	if q == nil {
		return refused(ErrNotFound, "job queue %s", ev.Queue)
	}
	s := q.share(ev.Name)
	if s == nil || !q.quota {
		return refused(ErrNotFound, "quota share %s", ev.Name)
	}
	if !s.disabled {
		return refused(ErrConflict, "quota share %s must be DISABLED before it is deleted", s.name)
	}
	c.failAll(s, ReasonShareDeleted)
	c.unregister(s)
	q.shares = slices.DeleteFunc(q.shares, func(x *share) bool { return x == s })
	c.reconfigure(q.env)
	return nil
}

// failAll removes every job of a share that is being deleted.
func (c *Core) failAll(s *share, code ReasonCode) {
	var all []*job
	for _, set := range []*jobSet{&s.dispatched, &s.runnable, &s.infeasible} {
		set.Each(func(j *job) bool { all = append(all, j); return true })
	}
	sort.Slice(all, func(a, b int) bool { return all[a].id < all[b].id })
	for _, j := range all {
		c.pending = append(c.pending, Decision{Kind: Fail, Job: j.id, Queue: s.q.name, Share: s.name, Reason: Reason{Code: code, Share: s.name}})
		c.removeJob(j)
	}
}

func (c *Core) submit(ev Submit, restore bool, dispatchedAt int64) error {
	if ev.Job == "" {
		return invalid("job ID is empty")
	}
	if c.lookup(ev.Job) != nil {
		return refused(ErrConflict, "job %s already exists", ev.Job)
	}
	if ev.Priority < 0 || ev.Priority > MaxPriority {
		return invalid("schedulingPriority %d is outside 0-%d", ev.Priority, MaxPriority)
	}
	if ev.PreemptionRetries < -1 {
		return invalid("preemptionRetriesBeforeTermination %d is negative", ev.PreemptionRetries)
	}
	s, err := c.submitShare(ev, restore)
	if err != nil {
		return err
	}
	one, more, err := c.demandOf(ev.Demand)
	if err != nil {
		return err
	}
	j := c.newJob()
	*j = job{
		id: ev.Job, idKey: idKeyOf(ev.Job), sh: s, one: [1]need{one}, more: more,
		prio: int32(ev.Priority), retries: int32(ev.PreemptionRetries), preempted: int32(ev.Preempted),
		queuedAt: ev.QueuedAt, slot: j.slot, gen: j.gen, hash: idHash(ev.Job),
	}
	c.index(j)
	if restore {
		j.dispatchedAt = dispatchedAt
		c.hold(j)
		return nil
	}
	c.enqueue(j)
	return nil
}

func (c *Core) submitShare(ev Submit, restore bool) (*share, error) {
	q := c.queues[ev.Queue]
	if q == nil {
		return nil, refused(ErrNotFound, "job queue %s", ev.Queue)
	}
	if q.fair != nil {
		if ev.Share == "" {
			return nil, invalid("job queue %s has a fair-share scheduling policy; shareIdentifier is required", q.name)
		}
		if !restore && q.disabled {
			return nil, refused(ErrConflict, "job queue %s is DISABLED", q.name)
		}
		return c.fairSubmitShare(q, ev.Share)
	}
	if !q.quota {
		if ev.Share != "" {
			return nil, invalid("job queue %s has no quota share scheduling policy; quotaShareName must not be given", q.name)
		}
		if !restore && q.disabled {
			return nil, refused(ErrConflict, "job queue %s is DISABLED", q.name)
		}
		return q.shares[0], nil
	}
	if ev.Share == "" {
		return nil, invalid("job queue %s has a quota share scheduling policy; quotaShareName is required", q.name)
	}
	s := q.share(ev.Share)
	if s == nil {
		return nil, refused(ErrNotFound, "quota share %s in job queue %s", ev.Share, q.name)
	}
	if !restore && s.disabled {
		return nil, refused(ErrConflict, "quota share %s is DISABLED", s.name)
	}
	if !restore && q.disabled {
		return nil, refused(ErrConflict, "job queue %s is DISABLED", q.name)
	}
	return s, nil
}

// demandOf validates a job's demand and interns it, summing repeated units
// (instance groups of one type) and sorting by unit name: the one unit it
// needs, or more than one (see job.needs).
func (c *Core) demandOf(us []UnitCount) (need, []need, error) {
	if len(us) == 1 && us[0].Unit != "" && us[0].Count >= 1 && us[0].Count <= 1<<30 {
		return need{u: c.unit(us[0].Unit), n: int32(us[0].Count)}, nil, nil // the common case, without the map
	}
	d, err := c.demandList(us)
	if err != nil || len(d) > 1 {
		return need{}, d, err
	}
	return d[0], nil, nil
}

func (c *Core) demandList(us []UnitCount) ([]need, error) {
	if len(us) == 0 {
		return nil, invalid("job requests no capacity")
	}
	sum := map[string]int{}
	for _, u := range us {
		if u.Unit == "" {
			return nil, invalid("capacity unit is empty")
		}
		if u.Count < 1 {
			return nil, invalid("%s count %d is below 1", u.Unit, u.Count)
		}
		sum[u.Unit] += u.Count
		if sum[u.Unit] > 1<<30 {
			return nil, invalid("%s count is too large", u.Unit)
		}
	}
	names := make([]string, 0, len(sum))
	for n := range sum {
		names = append(names, n)
	}
	slices.Sort(names)
	d := make([]need, len(names))
	for i, n := range names {
		d[i] = need{u: c.unit(n), n: int32(sum[n])}
	}
	return d, nil
}

func (c *Core) setPriority(ev SetPriority) error {
	j := c.lookup(ev.Job)
	if j == nil {
		return refused(ErrNotFound, "job %s", ev.Job)
	}
	if ev.Priority < 0 || ev.Priority > MaxPriority {
		return invalid("schedulingPriority %d is outside 0-%d", ev.Priority, MaxPriority)
	}
	if int32(ev.Priority) == j.prio {
		return nil
	}
	switch j.state {
	case dispatched:
		// Who borrows and who may be a victim is re-derived: look again at the
		// whole pool.
		j.sh.dispatched.Delete(j)
		j.prio = int32(ev.Priority)
		j.sh.dispatched.Insert(j)
		c.markPool(j.sh.q.env)
	case runnable:
		c.dequeue(j)
		j.prio = int32(ev.Priority)
		c.enqueue(j)
	case infeasible:
		j.sh.infeasible.Delete(j)
		j.prio = int32(ev.Priority)
		j.sh.infeasible.Insert(j)
	}
	return nil
}

func (c *Core) terminate(ev Terminate) error {
	j := c.lookup(ev.Job)
	if j == nil {
		return refused(ErrNotFound, "job %s", ev.Job)
	}
	c.removeJob(j)
	return nil
}

func (c *Core) attemptEnded(ev AttemptEnded) error {
	j := c.byHandle(ev.Handle)
	if j == nil {
		j = c.lookup(ev.Job)
	}
	if j == nil {
		return refused(ErrNotFound, "job %s", ev.Job)
	}
	if j.state != dispatched {
		return refused(ErrConflict, "job %s is not dispatched", ev.Job)
	}
	c.warm(j)
	if !ev.Requeue {
		c.removeJob(j)
		return nil
	}
	c.release(j)
	c.enqueue(j)
	return nil
}

// warm reads, before a dispatched job j ends, the lines that its end and
// the next cycle read first: j's entry in the table of IDs, its share's
// head, and the job behind the head, which becomes the head when the head
// is dispatched. With a million jobs queued each is rarely in the cache;
// begun together, the loads overlap instead of each stalling in turn.
func (c *Core) warm(j *job) {
	t := c.ids.shard(j.hash) // not empty: j is live, so it is in the table
	c.warmed += int64(t.entries[j.hash&uint32(len(t.entries)-1)].slot)
	if cs := j.sh.runnable.chunks; len(cs) > 0 {
		c.warmed += cs[0][0].queuedAt
		if len(cs[0]) > 1 {
			c.warmed += cs[0][1].queuedAt
		}
	}
}

// removeJob takes a job out of the core, freeing what it holds.
func (c *Core) removeJob(j *job) {
	switch j.state {
	case dispatched:
		c.release(j)
	case runnable:
		c.dequeue(j)
	case infeasible:
		j.sh.infeasible.Delete(j)
	}
	j.state = 0
	c.forget(j)
}

// jobSlab is how many jobs one allocation holds. In slabs, a million jobs
// are a thousand objects for the garbage collector to find and mark.
const jobSlab = 1024

// newJob returns a slot for a new job, zeroed but for its place: the last
// one freed, or the next of the slabs. Slabs are kept for the core's life,
// so the memory held follows the most jobs live at once, as a map of them
// does.
func (c *Core) newJob() *job {
	if n := len(c.freeJobs); n > 0 {
		j := c.freeJobs[n-1]
		c.freeJobs = c.freeJobs[:n-1]
		c.slabLive[j.slot/jobSlab]++
		return j
	}
	if c.slots == uint32(len(c.slabs))*jobSlab {
		c.slabs = append(c.slabs, nil)
		c.slabLive = append(c.slabLive, 0)
	}
	i := c.slots / jobSlab
	if c.slabs[i] == nil {
		c.slabs[i] = new([jobSlab]job)
	}
	c.slabLive[i]++
	j := c.at(c.slots)
	j.slot = c.slots
	c.slots++
	return j
}

// byHandle is the live job h names, or nil.
func (c *Core) byHandle(h Handle) *job {
	slot := uint32(h) - 1
	if h == 0 || slot >= c.slots || c.slabs[slot/jobSlab] == nil {
		return nil
	}
	j := c.at(slot)
	if j.state == 0 || j.gen != uint32(h>>32) {
		return nil
	}
	return j
}

// Handle is the live job's handle, or the zero Handle.
func (c *Core) Handle(id string) Handle {
	if j := c.lookup(id); j != nil {
		return j.handle()
	}
	return 0
}

// forget takes job j, no longer in any of its share's sets, out of the
// live jobs and frees its slot for a later submission. Only a share's last
// head and the list of jobs that became infeasible may still point at it:
// the one is cleared, the other skips jobs not infeasible.
func (c *Core) forget(j *job) {
	c.unindex(j)
	if j.sh.lastHead == j {
		j.sh.lastHead = nil // a new job in this slot is a new head
	}
	*j = job{slot: j.slot, gen: j.gen + 1}
	c.slabLive[j.slot/jobSlab]--
	c.freeJobs = append(c.freeJobs, j)
}
