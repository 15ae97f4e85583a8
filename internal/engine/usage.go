package engine

import (
	"context"
	"errors"
	"time"

	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/usage"
)

// DefaultUsageRetention is how long usage history is kept by default.
const DefaultUsageRetention = 400 * 24 * time.Hour

// usagePurgeEvery is how often closed usage segments past retention are
// deleted.
const usagePurgeEvery = time.Hour

// usageState is the engine's accounting of the capacity attempts hold:
// the tracker of live attempts, whose segments each cycle writes with its
// other changes, so a restart or a failover resumes them from the store
// and nothing is counted twice or lost.
type usageState struct {
	tracker   *usage.Tracker
	dirty     bool      // account at the next cycle even without a change
	lastPurge time.Time // of closed segments past retention
	// use is the instances per unit the followed attempts of each share
	// hold, demand is each followed attempt's: whether a share stands
	// beyond its limit, without asking the core.
	use    map[usage.ShareKey]map[string]int
	demand map[string][]record.UnitCount
	prio   map[string]int // each followed attempt's job's priority
	// Kept from cycle to cycle, emptied: a cycle's scratch.
	seen   map[string]bool
	beyond shareMemo
	ids    []string
	ask    []string
	change []usage.ShareKey
	parts  []usage.Part
}

// follow notes that attempt id of job j is followed from now on.
func (u *usageState) follow(id string, j *record.Job) {
	k := usage.ShareKey{Queue: j.Queue, Share: j.QuotaShareName}
	use := u.use[k]
	if use == nil {
		use = map[string]int{}
		u.use[k] = use
	}
	for _, d := range j.Demand {
		use[d.Unit] += d.Count
	}
	u.demand[id] = j.Demand
	u.prio[id] = j.SchedulingPriority
}

// unfollow notes that attempt id of share k is no longer followed.
func (u *usageState) unfollow(id string, k usage.ShareKey) {
	use := u.use[k]
	for _, d := range u.demand[id] {
		use[d.Unit] -= d.Count
	}
	delete(u.demand, id)
	delete(u.prio, id)
}

// resumeUsage follows again the segments that were open when the store was
// last written; the first cycle closes those of attempts no longer live.
func (e *Engine) resumeUsage(ctx context.Context) error {
	e.usage.tracker = usage.NewTracker()
	e.usage.use, e.usage.demand, e.usage.prio = map[usage.ShareKey]map[string]int{}, map[string][]record.UnitCount{}, map[string]int{}
	e.usage.dirty = true
	us, ok := e.opts.Store.(store.UsageStore)
	if !ok {
		return nil
	}
	return us.OpenUsage(ctx, func(s store.UsageSegment) error {
		e.usage.tracker.Resume(s)
		return nil
	})
}

// accountUsage, at the end of a cycle's decisions, has the tracker follow
// whose capacity every dispatched attempt holds now. After a change of
// resources (limits, strategies) or a restart it asks the core of every
// attempt; otherwise only of those whose holding may have changed: the
// attempts of the jobs changed, every attempt of a changed share that
// borrows (its own and borrowed capacity is split by dispatch order,
// priority first, so a new job can push another beyond the limit), and
// every attempt that borrows (whose lender depends on the other shares).
// A share's jobs that all stand within its limit stay own until its limit
// changes.
func (e *Engine) accountUsage(c *cycle) {
	now := c.now
	if e.opts.UsageRetention > 0 && now.Sub(e.usage.lastPurge) >= usagePurgeEvery {
		e.usage.lastPurge = now
		c.usagePurgeBefore = ms(now.Add(-e.opts.UsageRetention))
	}
	full := e.usage.dirty || len(c.resources) > 0 || len(c.deleted) > 0
	if !full && len(c.touched) == 0 {
		return
	}
	e.usage.dirty = false
	nowMs := ms(now)
	if full {
		e.holdAll(c, nowMs)
	} else {
		e.accountChanges(c, nowMs)
	}
}

// accountChanges is accountUsage after a cycle that changed jobs only.
// The holding of an attempt whose share stands within its limit is all
// own: only the others are asked of the core.
func (e *Engine) accountChanges(c *cycle, now int64) {
	tr, u := e.usage.tracker, &e.usage
	if u.seen == nil {
		u.seen = map[string]bool{}
	}
	seen, beyond := u.seen, &u.beyond
	clear(seen)
	beyond.reset()
	ids := u.ids[:0]
	add := func(job string) {
		if !seen[job] {
			seen[job] = true
			ids = append(ids, job)
		}
	}
	changed := u.change[:0]
	// Attempts that ended, those that began and those whose priority
	// changed move capacity between shares or within one; a waiting job
	// may change which share's idle capacity borrowers stand on, when its
	// share has some. Other changes (a running job's status) move none.
	recheck := false
	for _, j := range c.touched {
		if seen[j.JobID] {
			continue // touched more than once
		}
		k := usage.ShareKey{Queue: j.Queue, Share: j.QuotaShareName}
		old := tr.AttemptOfJob(j.JobID)
		_, live := e.attempts[j.AttemptID]
		live = live && j.AttemptID != ""
		if old != "" && (!live || old != j.AttemptID) {
			e.endUsage(c, old, now)
			old = ""
			recheck = true
			changed = append(changed, k)
		}
		switch {
		case !live:
			recheck = recheck || e.hasIdle(k)
			continue
		case old == "":
			u.follow(j.AttemptID, j)
		case u.prio[old] == j.SchedulingPriority:
			continue
		}
		u.prio[j.AttemptID] = j.SchedulingPriority
		recheck = true
		add(j.JobID)
		changed = append(changed, k)
	}
	// Borrowers: whose capacity they stand on depends on the other shares.
	if recheck {
		tr.Borrowing(func(job, _, _ string) { add(job) })
	}
	// Every attempt of a changed share beyond its limit: which of them
	// borrow follows their order.
	isBeyond := func(k usage.ShareKey) bool {
		b, ok := beyond.get(k)
		if !ok {
			b = e.beyondLimit(k)
			beyond.put(k, b)
		}
		return b
	}
	for _, k := range changed {
		if isBeyond(k) {
			tr.AttemptsOfShare(k.Queue, k.Share, func(job, _ string) { add(job) })
		}
	}
	u.ids = ids
	// Those within their share's limit hold all own; the others are asked
	// of the core, all at once.
	clear(changed)
	u.change = changed[:0]
	ask := u.ask[:0]
	for _, job := range ids {
		j := e.jobs[job]
		if j == nil {
			continue
		}
		if isBeyond(usage.ShareKey{Queue: j.Queue, Share: j.QuotaShareName}) {
			ask = append(ask, job)
		} else if j.AttemptID != "" {
			u.parts = usage.AppendOwnOf(u.parts[:0], j.Demand)
			e.holdOne(c, j, u.parts, now)
		}
	}
	u.ask = ask
	if len(ask) == 0 {
		return
	}
	holdings := e.core.HoldingsOf(ask)
	for _, job := range ask {
		j := e.jobs[job]
		h, ok := holdings[job]
		if !ok || j.AttemptID == "" {
			continue
		}
		u.parts = usage.AppendParts(u.parts[:0], h)
		e.holdOne(c, j, u.parts, now)
	}
}

// shareMemo remembers a bool per share for one cycle. A cycle asks of few
// shares, many times: a list searched in order costs less than hashing
// two strings, up to a few shares, then a map takes over.
type shareMemo struct {
	keys []usage.ShareKey
	vals []bool
	m    map[usage.ShareKey]bool
}

const shareMemoList = 16 // shares kept in the list before the map

func (m *shareMemo) reset() {
	clear(m.keys)
	m.keys, m.vals = m.keys[:0], m.vals[:0]
	clear(m.m)
}

func (m *shareMemo) get(k usage.ShareKey) (v, ok bool) {
	for i := range m.keys {
		if m.keys[i] == k {
			return m.vals[i], true
		}
	}
	v, ok = m.m[k]
	return v, ok
}

func (m *shareMemo) put(k usage.ShareKey, v bool) {
	if len(m.keys) < shareMemoList {
		m.keys, m.vals = append(m.keys, k), append(m.vals, v)
		return
	}
	if m.m == nil {
		m.m = map[usage.ShareKey]bool{}
	}
	m.m[k] = v
}

// hasIdle tells whether share k holds less than its limit of a unit:
// borrowers may stand on that idle capacity.
func (e *Engine) hasIdle(k usage.ShareKey) bool {
	q := e.model.QueueNamed(k.Queue)
	if q == nil || !q.Quota() {
		return false
	}
	s := q.Share(k.Share)
	if s == nil {
		return false
	}
	use := e.usage.use[k]
	for _, l := range s.CapacityLimits {
		if use[l.CapacityUnit] < l.MaxCapacity {
			return true
		}
	}
	return false
}

// holdOne has the tracker follow what job j's attempt holds now; a new
// attempt from its dispatch.
func (e *Engine) holdOne(c *cycle, j *record.Job, parts []usage.Part, now int64) {
	tr := e.usage.tracker
	at := now
	followed, same := tr.Holds(j.AttemptID, parts)
	if same {
		return
	}
	if !followed && j.DispatchedAt > 0 {
		at = min(now, j.DispatchedAt/int64(time.Millisecond))
	}
	a := usage.Attempt{ID: j.AttemptID, Job: j.JobID, Queue: j.Queue, Share: j.QuotaShareName, ShareID: j.ShareIdentifier, Owner: j.Owner}
	c.usage = tr.AppendHold(c.usage, a, parts, at)
}

// endUsage closes the segments of attempt id, which holds nothing now.
func (e *Engine) endUsage(c *cycle, id string, now int64) {
	tr := e.usage.tracker
	a, _ := tr.Attempt(id)
	e.usage.unfollow(id, usage.ShareKey{Queue: a.Queue, Share: a.Share})
	stop, preempted := e.attemptEnd(a.Job, id, now)
	c.usage = tr.AppendEnd(c.usage, id, stop, preempted)
	if preempted {
		c.preemptedAttempts = append(c.preemptedAttempts, id)
	}
}

// beyondLimit tells whether the attempts followed of share k hold more of
// a unit than its limit: some of them borrow. Those of a FIFO queue never
// do.
func (e *Engine) beyondLimit(k usage.ShareKey) bool {
	q := e.model.QueueNamed(k.Queue)
	if q == nil || !q.Quota() {
		return false
	}
	s := q.Share(k.Share)
	for unit, n := range e.usage.use[k] {
		limit := 0
		if s != nil {
			for _, l := range s.CapacityLimits {
				if l.CapacityUnit == unit {
					limit = l.MaxCapacity
				}
			}
		}
		if n > limit {
			return true
		}
	}
	return false
}

// holdAll has the tracker follow the holdings of every dispatched job,
// counting each share's use again, and ends the attempts it follows that
// nothing holds any more.
func (e *Engine) holdAll(c *cycle, now int64) {
	tr := e.usage.tracker
	clear(e.usage.use)
	clear(e.usage.demand)
	clear(e.usage.prio)
	held := map[string]bool{}
	for _, q := range e.model.Queues() {
		for _, h := range e.core.Holdings(q.JobQueueName) {
			j := e.jobs[h.Job]
			if j == nil || j.AttemptID == "" {
				continue
			}
			if old := tr.AttemptOfJob(j.JobID); old != "" && old != j.AttemptID {
				e.endUsage(c, old, now)
			}
			held[j.AttemptID] = true
			e.usage.follow(j.AttemptID, j)
			e.usage.parts = usage.AppendParts(e.usage.parts[:0], h)
			e.holdOne(c, j, e.usage.parts, now)
		}
	}
	for _, id := range tr.Live() {
		if !held[id] {
			e.endUsage(c, id, now)
		}
	}
}

// attemptEnd is when attempt id of job ended, by its record (now when the
// record is gone), and whether a preemption ended it.
func (e *Engine) attemptEnd(job, id string, now int64) (int64, bool) {
	j := e.jobs[job]
	if j == nil {
		return now, false
	}
	stop := now
	for i := range j.Attempts {
		if a := &j.Attempts[i]; isAttempt(a.ServiceResourceID.Value, id) && a.StoppedAt > 0 {
			stop = min(now, a.StoppedAt)
		}
	}
	return stop, preemptedAttempt(j, id)
}

// preemptedAttempt tells whether the job's attempt id was preempted: its
// most recent preemptions include it.
func preemptedAttempt(j *record.Job, id string) bool {
	if ps := j.PreemptionSummary; ps != nil {
		for _, a := range ps.RecentPreemptedAttempts {
			if isAttempt(a.ServiceResourceID.Value, id) {
				return true
			}
		}
	}
	return false
}

// isAttempt tells whether an attempt's training job ARN ends in "/"+id,
// without making that string.
func isAttempt(arn, id string) bool {
	n := len(arn) - len(id)
	return n > 0 && arn[n-1] == '/' && arn[n:] == id
}

// afterUsageCommit hands the cycle's segments to the sink, which sums
// them, and purges closed segments past retention.
func (e *Engine) afterUsageCommit(ctx context.Context, c *cycle) {
	if e.sink != nil && (len(c.usage) > 0 || len(c.preemptedAttempts) > 0) {
		e.sink.Usage(c.usage, c.preemptedAttempts)
	}
	if c.usagePurgeBefore > 0 {
		if us, ok := e.opts.Store.(store.UsageStore); ok {
			if _, err := us.PurgeUsage(ctx, c.usagePurgeBefore); err != nil {
				e.log.Warn("purge usage", "err", err)
			}
		}
	}
}

// ErrNoUsage is Usage's error on a store that keeps no usage history.
var ErrNoUsage = errors.New("this store keeps no usage history")

// Usage reports the usage history q asks for, from the store, with the
// attempts still holding capacity counted up to now; a period given by
// q.Since ends now. It returns the query with its period resolved.
func (e *Engine) Usage(ctx context.Context, q usage.Query) (usage.Query, []usage.Row, error) {
	now := ms(e.opts.Clock.Now())
	q = q.Resolve(now)
	if err := q.Check(); err != nil {
		return q, nil, &Error{Code: Invalid, Message: err.Error()}
	}
	us, ok := e.opts.Store.(store.UsageStore)
	if !ok {
		return q, nil, &Error{Code: Internal, Message: "internal error", Err: ErrNoUsage}
	}
	rep := usage.NewReport(q, now)
	err := us.Usage(ctx, q.From, q.To, func(s store.UsageSegment) error {
		rep.Add(s)
		return nil
	})
	if err != nil {
		return q, nil, &Error{Code: Internal, Message: "internal error", Err: err}
	}
	return q, rep.Rows(), nil
}

// UsageCounters returns the capacity held since this engine started, by
// queue, share and kind, up to now: what counters export.
func (e *Engine) UsageCounters() []usage.Counter {
	e.rlock()
	defer e.mu.RUnlock()
	if e.usage.tracker == nil {
		return nil
	}
	return e.usage.tracker.Counters(ms(e.opts.Clock.Now()))
}
