package engine

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/estimator"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// Engine is the single writer around the core. Create it with New and run
// it with Run; its methods are safe for concurrent use.
type Engine struct {
	opts Options
	log  logger
	disp *dispatcher          // the executor's calls
	est  *estimator.Estimator // start estimates

	ops     chan *op
	stopped chan struct{}
	// posted holds a synchronous engine's internal changes until its next
	// cycle.
	postedMu sync.Mutex
	posted   []*op

	readWaits readWaits // reads from outside the loop, counted as they take mu
	reads     reads     // describes served without mu

	// mu guards everything below. The loop holds it to write; API reads
	// take it shared (rlock), except describes of jobs kept in reads.
	mu        sync.RWMutex
	core      *core.Core
	policies  map[string]*policyRec  // by ARN
	envs      map[string]*envRec     // by name
	queues    map[string]*queueRec   // by name
	jobs      map[string]*record.Job // by ID, ended ones included until purged
	attempts  map[string]liveAttempt // by attempt ID
	tokens    map[string]string      // clientToken → job ID
	waits     map[string]waitMark    // infeasible jobs, for time limit actions
	lastQ     int64                  // last queue time handed out (ns)
	lastPurge time.Time
	subs      subscribers
	counts    map[string]int // jobs by status
	ended     []endMark      // ended jobs in the order they ended, for purging
	tx        *tx
	spare     *tx // the last cycle's, emptied, for the next (recycle)
	usage     usageState
	// wantEvents and wantTransitions: what setStatus records; timed:
	// whether cycles are timed (listeners).
	wantEvents, wantTransitions, timed bool
	// wakeAt is when the last cycle's core wants a cycle without any
	// change: a minimum runtime that held a preemption back ends (zero:
	// never). The loop writes it.
	wakeAt time.Time
}

// waitMark records since when a job waits for a misconfiguration reason.
type waitMark struct {
	reason string
	since  int64 // ms
}

// endMark is a job that ended, and when (ms).
type endMark struct {
	id    string
	at    int64
	token string // its clientToken, for a job known only by it
}

// op is a change run inside the loop with mu held.
type op struct {
	fn   func(now time.Time) error
	done chan error // nil for internal changes nobody waits for
	err  error
}

// tx collects what one cycle changed: records to commit and executor
// actions to take once they are durable.
type tx struct {
	now        time.Time
	jobs       map[string]*record.Job
	resources  map[string]store.Resource
	deleted    []string
	submitted  []*record.Job
	starts     []start
	stops      []stop
	events     []JobEvent
	dispatches []DispatchInfo
	preempts   []PreemptInfo
	// purgeBefore, when set, purges ended jobs from the store after commit.
	purgeBefore int64
	// transitions are the events' bare transitions, for TransitionObservers.
	transitions []Transition
	// jobsChanged: a job changed, which an ephemeral engine keeps no
	// record of in jobs.
	jobsChanged bool
	// usage holds the usage segments to write, preemptedAttempts the
	// attempts whose segments to mark preempted; usagePurgeBefore, when
	// set, purges closed segments that stopped before it after commit.
	usage             []store.UsageSegment
	preemptedAttempts []string
	usagePurgeBefore  int64
	// touched lists the jobs changed, in both kinds of engine, for the
	// usage accounting (duplicates included).
	touched []*record.Job
}

// start is an attempt to start, once the attempts preempted for it (its
// waitFor) have stopped.
type start struct {
	attempt executor.Attempt
	waitFor []string
	hold    time.Duration // the longest grace period of those in waitFor
}

// stop is an attempt to stop, with its job's grace period.
type stop struct {
	attempt string
	grace   time.Duration
}

// newTx begins a cycle's transaction for n requests, most of which change
// one job each, reusing what the last committed one left for it (recycle).
func (e *Engine) newTx(now time.Time, n int) *tx {
	if t := e.spare; t != nil {
		e.spare = nil
		t.now = now
		return t
	}
	return &tx{now: now, jobs: make(map[string]*record.Job, n), resources: map[string]store.Resource{}}
}

// recycleMax is the largest transaction whose maps and lists are kept for
// the next cycle: clearing a map costs what it once held, so a burst must
// not tax every cycle after it.
const recycleMax = 256

// recycle keeps a committed cycle's transaction for the next cycle, empty:
// allocating its maps anew was 4 % of a simulation's time.
// What was handed on (events, kept as the recent ones; dispatches and
// preemptions, to observers) is not reused.
func (e *Engine) recycle(t *tx) {
	if len(t.jobs) > recycleMax || len(t.resources) > recycleMax || len(t.submitted) > recycleMax ||
		len(t.starts) > recycleMax || len(t.stops) > recycleMax || len(t.transitions) > recycleMax || len(t.touched) > recycleMax {
		return
	}
	clear(t.jobs)
	clear(t.resources)
	clear(t.submitted)
	clear(t.starts)
	clear(t.stops)
	clear(t.transitions)
	clear(t.touched)
	usage, preempted := t.usage[:0], t.preemptedAttempts[:0]
	if len(t.usage) > recycleMax || len(t.preemptedAttempts) > recycleMax {
		usage, preempted = nil, nil // after a full recount: too large to keep
	}
	clear(t.usage)
	clear(t.preemptedAttempts)
	*t = tx{jobs: t.jobs, resources: t.resources, submitted: t.submitted[:0], starts: t.starts[:0],
		stops: t.stops[:0], transitions: t.transitions[:0], touched: t.touched[:0],
		usage: usage, preemptedAttempts: preempted}
	e.spare = t
}

// New opens an engine over the store, rebuilding its state from it and
// reconciling with what the executor reports.
func New(ctx context.Context, opts Options) (*Engine, error) {
	opts.setDefaults()
	if opts.Store == nil {
		return nil, errors.New("engine: no store")
	}
	e := &Engine{opts: opts, log: opts.Logger, ops: make(chan *op, 8192), stopped: make(chan struct{})}
	e.est = newEstimator(e)
	e.wantEvents, e.wantTransitions, e.timed = listeners(&e.opts)
	e.reads.on, e.reads.limit = !opts.Ephemeral, keptReads
	e.disp = newDispatcher(opts, e.log, func(u executor.Update) {
		e.post(func(now time.Time) error { e.handleUpdate(u, now); return nil })
	})
	e.clearState()
	if err := e.load(ctx); err != nil {
		e.disp.close()
		return nil, err
	}
	return e, nil
}

// clearState empties what load rebuilds from the store.
func (e *Engine) clearState() {
	e.core = core.New()
	e.policies = map[string]*policyRec{}
	e.envs = map[string]*envRec{}
	e.queues = map[string]*queueRec{}
	e.jobs = map[string]*record.Job{}
	e.attempts = map[string]liveAttempt{}
	e.tokens = map[string]string{}
	e.waits = map[string]waitMark{}
	e.counts = map[string]int{}
	e.ended = nil
	e.lastQ = 0
	e.reads.reset()
}

// do runs fn inside the loop and waits until its cycle is durable.
func (e *Engine) do(ctx context.Context, fn func(now time.Time) error) error {
	o := &op{fn: fn, done: make(chan error, 1)}
	if e.opts.Synchronous {
		if err := e.cycle(ctx, []*op{o}); err != nil {
			return err
		}
		return <-o.done
	}
	select {
	case e.ops <- o:
	case <-e.stopped:
		return e.stoppedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-o.done:
		return err
	case <-e.stopped:
		return e.stoppedErr()
	}
}

func (e *Engine) stoppedErr() error {
	return &Error{Code: Internal, Message: "internal error", Err: errors.New("engine stopped")}
}

// post queues an internal change without waiting for it.
// A synchronous engine keeps them for its next cycle.
func (e *Engine) post(fn func(now time.Time) error) {
	if e.opts.Synchronous {
		e.postedMu.Lock()
		e.posted = append(e.posted, &op{fn: fn})
		e.postedMu.Unlock()
		return
	}
	select {
	case e.ops <- &op{fn: fn}:
	case <-e.stopped:
	}
}

// Run schedules until ctx ends. It returns the first fatal error (a failed
// commit), after which every call fails: the process should restart and
// rebuild from the store.
func (e *Engine) Run(ctx context.Context) error {
	defer close(e.stopped)
	defer e.disp.close()
	stopEstimates := e.startEstimator()
	defer stopEstimates()
	var updates <-chan executor.Update
	if e.opts.Executor != nil {
		updates = e.opts.Executor.Updates()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	var leaseDone <-chan struct{}
	if e.opts.Lease != nil {
		leaseDone = e.opts.Lease.Done()
	}
	e.post(func(time.Time) error { return nil }) // a first cycle settles what load restored
	for {
		var batch []*op
		select {
		case <-ctx.Done():
			return nil
		case <-leaseDone:
			e.log.Error("the leadership lease ended; stopping")
			return ErrLeaseLost
		case o := <-e.ops:
			batch = append(batch, o)
		case u, ok := <-updates:
			if !ok {
				updates = nil // the executor has closed
				continue
			}
			batch = append(batch, &op{fn: func(now time.Time) error { e.handleUpdate(u, now); return nil }})
		case <-tick.C:
			batch = append(batch, &op{fn: e.housekeeping})
		case <-wake.C:
			batch = append(batch, &op{fn: func(time.Time) error { return nil }}) // a cycle, for the core
		}
		batch = e.drain(batch, updates)
		// A cycle that has begun finishes: its changes are committed even
		// when the engine is being stopped.
		if err := e.cycle(context.WithoutCancel(ctx), batch); err != nil {
			if p := (*cyclePanic)(nil); errors.As(err, &p) && p.reloaded {
				continue // the cycle was dropped whole; serving goes on
			}
			if e.opts.Lease != nil && !e.opts.Lease.Held() {
				// Paused past its lease, this server finds its commit
				// refused: the lease's end is the cause to report.
				e.log.Error("the leadership lease ended; stopping", "err", err)
				return ErrLeaseLost
			}
			e.log.Error("cycle failed; stopping", "err", err)
			return err
		}
		if !e.wakeAt.IsZero() {
			wake.Reset(max(0, e.wakeAt.Sub(e.opts.Clock.Now())))
		}
	}
}

// NextWake is when the engine wants a cycle though nothing changes: a
// minimum runtime that held a preemption back ends then. ok is false when
// nothing waits for one. Run keeps a timer for it; a synchronous engine's
// caller runs a cycle (ApplyInstant) at that time.
func (e *Engine) NextWake() (time.Time, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.wakeAt, !e.wakeAt.IsZero()
}

// drain adds whatever else is already waiting, so one commit covers many
// requests (group commit).
func (e *Engine) drain(batch []*op, updates <-chan executor.Update) []*op {
	for len(batch) < 4096 {
		select {
		case o := <-e.ops:
			batch = append(batch, o)
		case u, ok := <-updates:
			if !ok {
				return batch
			}
			batch = append(batch, &op{fn: func(now time.Time) error { e.handleUpdate(u, now); return nil }})
		default:
			return batch
		}
	}
	return batch
}

// cycle applies a batch of changes, runs the core, commits, answers and
// then acts: persist first, then act. A panic while deciding drops the
// whole cycle: its requests fail, nothing of it is committed, and the state
// is rebuilt from the store, as at a restart.
func (e *Engine) cycle(ctx context.Context, batch []*op) error {
	var start time.Time
	if e.timed {
		start = time.Now()
	}
	if e.opts.Synchronous {
		e.postedMu.Lock()
		if len(e.posted) > 0 {
			batch = append(e.posted, batch...) // what was posted meanwhile comes first
			e.posted = nil
		}
		e.postedMu.Unlock()
	}
	t, err := e.decide(ctx, batch)
	if err != nil {
		answerAll(batch, err)
		return err
	}
	// Encoding the changed records needs no lock: only a cycle changes
	// them, and this is the only cycle running. So readers need not wait
	// for it.
	b := e.storeBatch(t)
	if err := e.opts.Store.Commit(ctx, b); err != nil {
		err = fmt.Errorf("commit cycle: %w", err)
		answerAll(batch, &Error{Code: Internal, Message: "internal error", Err: err})
		return err
	}
	for _, o := range batch {
		if o.done != nil {
			o.done <- o.err
		}
	}
	e.act(t)
	e.publish(t, start)
	e.noteCycle(t)
	if t.purgeBefore > 0 {
		e.purgeStore(ctx, t.purgeBefore)
	}
	e.afterUsageCommit(ctx, t)
	e.recycle(t)
	return nil
}

// purgeStore forgets in the store the jobs that ended before the time (ms),
// most of them never read since this start, and counts the jobs by status
// again. No cycle runs meanwhile, so the store holds what memory does.
func (e *Engine) purgeStore(ctx context.Context, before int64) {
	n, err := e.opts.Store.PurgeEnded(ctx, before)
	if err != nil {
		e.log.Warn("purge ended jobs", "err", err)
	}
	if n == 0 || e.opts.Ephemeral {
		return
	}
	counts, err := e.opts.Store.CountJobs(ctx)
	if err != nil {
		e.log.Warn("count jobs", "err", err)
		return
	}
	e.mu.Lock()
	clear(e.counts)
	maps.Copy(e.counts, counts)
	e.mu.Unlock()
}

// decide applies the batch and runs the core, under the lock; it returns
// the cycle's changes, to commit and to act on.
func (e *Engine) decide(ctx context.Context, batch []*op) (t *tx, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = e.recoverCycle(ctx, r)
		}
	}()
	now := e.opts.Clock.Now()
	e.tx = e.newTx(now, len(batch))
	for _, o := range batch {
		o.err = o.fn(now)
	}
	e.step(now)
	e.wakeAt, _ = e.core.NextWake()
	e.accountUsage(now)
	e.publishReads()
	t = e.tx
	e.tx = nil
	return t, nil
}

// cyclePanic is the error of a cycle that panicked.
type cyclePanic struct {
	value    any
	reloaded bool // the state was rebuilt from the store
}

func (p *cyclePanic) Error() string { return fmt.Sprintf("panic in a scheduling cycle: %v", p.value) }

// recoverCycle logs a cycle's panic with its stack, and rebuilds the state
// the cycle had half changed from the store, where none of it was
// committed. Reports the executor had sent in the cycle are asked for again
// by the reconciliation that follows the rebuild.
func (e *Engine) recoverCycle(ctx context.Context, r any) error {
	e.log.Error("panic in a scheduling cycle: its changes are dropped and the state is reloaded from the store",
		"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	e.tx = nil
	p := &cyclePanic{value: r}
	if e.opts.Ephemeral {
		return &Error{Code: Internal, Message: "internal error", Err: p} // nothing to rebuild from
	}
	e.clearState()
	if err := e.load(ctx); err != nil {
		return &Error{Code: Internal, Message: "internal error", Err: fmt.Errorf("%w; reloading the state: %v", p, err)}
	}
	p.reloaded = true
	return &Error{Code: Internal, Message: "internal error", Err: p}
}

func answerAll(batch []*op, err error) {
	for _, o := range batch {
		if o.done != nil {
			o.done <- err
		}
	}
}

// step runs the core's one cycle for the changes just applied (spec 2.3):
// what it held back waits for the next change.
func (e *Engine) step(now time.Time) {
	e.applyDecisions(e.core.Step(now), now)
	// An event each: grown once, not by doubling a slice of large values.
	e.tx.events = slices.Grow(e.tx.events, len(e.tx.submitted))
	for _, j := range e.tx.submitted {
		if j.Status == StatusSubmitted {
			e.setStatus(j, StatusRunnable, now)
		}
	}
}

func (e *Engine) storeBatch(t *tx) *store.Batch {
	b := &store.Batch{DeletedResources: t.deleted, Usage: t.usage, PreemptedAttempts: t.preemptedAttempts}
	for _, r := range t.resources {
		b.Resources = append(b.Resources, r)
	}
	if e.opts.Ephemeral {
		return b
	}
	b.Jobs = make([]store.Job, 0, len(t.jobs))
	for _, j := range t.jobs {
		b.Jobs = append(b.Jobs, store.Job{
			ID: j.JobID, Name: j.JobName, Queue: j.JobQueue, Share: cmp.Or(j.QuotaShareName, j.ShareIdentifier),
			Status: j.Status, CreatedAt: j.CreatedAt, EndedAt: j.EndedAt, ClientToken: j.ClientToken, Doc: record.Encode(j),
		})
	}
	return b
}

// act hands the executor calls of the committed cycle to the dispatcher:
// the preemptors are held until their victims have stopped, then the stops
// go, so capacity is being freed before the other new attempts ask for it.
func (e *Engine) act(t *tx) {
	for _, s := range t.starts {
		if len(s.waitFor) > 0 {
			e.disp.hold(s.attempt, s.waitFor, s.hold)
		}
	}
	for _, s := range t.stops {
		e.disp.stop(s.attempt, s.grace)
	}
	for _, s := range t.starts {
		if len(s.waitFor) == 0 {
			e.disp.start(s.attempt)
		}
	}
}

// touch marks a job record changed in this cycle. An ephemeral engine
// stores no job: it notes only that one changed.
func (e *Engine) touch(j *record.Job) {
	e.tx.touched = append(e.tx.touched, j)
	if e.opts.Ephemeral {
		e.tx.jobsChanged = true
		return
	}
	e.tx.jobs[j.JobID] = j
}

func (e *Engine) touchResource(kind, arn string, r record.Record) {
	e.tx.resources[arn] = store.Resource{Kind: kind, ARN: arn, Doc: record.Encode(r)}
}

func (e *Engine) deleteResource(arn string) {
	delete(e.tx.resources, arn)
	e.tx.deleted = append(e.tx.deleted, arn)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// newUUID returns a version 7 UUID: the time in milliseconds, then random
// bits. IDs made later sort later, so the store's indexes take new jobs at
// their right-hand edge instead of dirtying a random page per job.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("engine: no randomness: " + err.Error())
	}
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	// IDs made in one millisecond would sort at random, and lists order
	// jobs of one creation time by ID: each ID is made greater than the
	// last (RFC 9562's monotonic random), so they sort as they were made.
	lastUUID.Lock()
	defer lastUUID.Unlock()
	if bytes.Compare(b[:], lastUUID.b[:]) <= 0 {
		b = lastUUID.b
		for i := 15; i > 8; i-- { // the random bits after the variant's
			if b[i]++; b[i] != 0 {
				break
			}
		}
	}
	lastUUID.b = b
	return formatUUID(b)
}

// lastUUID is the last ID newUUID made.
var lastUUID struct {
	sync.Mutex
	b [16]byte
}

// formatUUID writes a UUID's 16 bytes in the 8-4-4-4-12 hex form.
func formatUUID(b [16]byte) string {
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// coreErr turns the core's refusal of an event into a client error.
func coreErr(err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Kind {
	case core.ErrNotFound:
		return &Error{Code: NotFound, Message: ce.Msg + " does not exist"}
	case core.ErrConflict:
		return &Error{Code: Conflict, Message: ce.Msg}
	case core.ErrInvalid:
		return &Error{Code: Invalid, Message: ce.Msg}
	}
	return err
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
