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

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/describecache"
	"github.com/sharq-dev/sharq/internal/estimator"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
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
	// driven: the caller drives the cycles (Options.Driver); sink, when
	// not nil, takes the cycles' transitions instead of job records and
	// events (Driver.Sink). Set by New, then only read.
	driven bool
	sink   Sink
	// posted holds a driven engine's internal changes until its next
	// cycle (drive).
	postedMu sync.Mutex
	posted   []*op

	readWaits readWaits            // reads from outside the loop, counted as they take mu
	describes *describecache.Cache // describes served without mu; nil when jobs are not kept
	bus       jobevents.Bus        // event subscribers and recent events: guarded by its own mutex
	// timed: whether cycles are timed, for observers. Set by New, then
	// only read.
	timed bool

	// mu guards state, and what describes keeps beside the jobs (their shares'
	// heads), which a cycle publishes with it.
	mu sync.RWMutex
	state
}

// state is what the loop owns: the core and the records around it. Only
// the loop writes it, holding mu to write: a cycle's decide, the recount
// after a purge of the store (purgeStore), and load when it rebuilds the
// state after a panic; load at New runs before anyone else can read. The
// other steps of a cycle (commit, answer, act, publish) read it without
// mu, since no one else writes it. Readers outside the loop (the API, the
// console, metrics, the estimator's copy) take mu shared (rlock) and copy
// out what they return, or read what a cycle published for them: kept
// describes (reads), events (bus), estimates. No store I/O is made while
// mu is held, except when the state is rebuilt after a panic
// (recoverCycle): readers must wait for it then.
type state struct {
	core      *core.Core
	model     *batchmodel.Model      // AWS Batch's resources
	jobs      map[string]*record.Job // by ID, ended ones included until purged
	attempts  map[string]liveAttempt // by attempt ID
	tokens    map[string]string      // clientToken → job ID
	waits     map[string]waitMark    // infeasible jobs, for time limit actions
	counts    map[string]int         // jobs by status
	ended     []endMark              // ended jobs in the order they ended, for purging
	lastQ     int64                  // last queue time handed out (ns)
	lastPurge time.Time              // of ended jobs, by housekeeping
	// purgedBefore is the last purge's bound (ms): a job that ended
	// before it is gone, though a read from the store may still find it.
	purgedBefore int64
	usage        usageState
	// wakeAt is when the last cycle's core wants a cycle without any
	// change: a minimum runtime that held a preemption back ends (zero:
	// never). Run reads it without mu.
	wakeAt time.Time
	// spare is the last cycle's value, emptied, for the next (recycle).
	// The loop's alone: written and read without mu.
	spare *cycle
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

// change is what a cycle's decide applies, with mu held to write: a
// request or a report. It records what it changed in the cycle it is
// given; its error is the request's answer.
type change interface {
	apply(e *Engine, c *cycle) error
}

// changeFunc is a change written as a function.
type changeFunc func(c *cycle) error

func (f changeFunc) apply(_ *Engine, c *cycle) error { return f(c) }

// op is a change on its way to a cycle, with its answer.
type op struct {
	change change
	done   chan error // nil for internal changes nobody waits for
	err    error      // the change's answer, sent once the cycle is committed
}

// cycle is one cycle as a value: decide builds it, and the steps after it
// (commit, answer, act, publish) are handed it, as raft's Ready is handed
// to its user. It holds the batch of changes with their answers, the
// records to commit, the executor actions to take once they are durable,
// the events and transitions to publish and the usage segments to write.
type cycle struct {
	now        time.Time
	ops        []*op // the batch, answered once committed
	jobs       map[string]*record.Job
	resources  map[string]store.Resource
	deleted    []string
	submitted  []*record.Job
	starts     []start
	stops      []stop
	events     []jobevents.Event
	dispatches []jobevents.Dispatch
	preempts   []jobevents.Preempt
	// purgeBefore, when set, purges ended jobs from the store after commit.
	purgeBefore int64
	// transitions are the events' bare transitions, for a sink, which
	// takes them instead of events.
	transitions []jobevents.Transition
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

// newCycle begins a cycle for a batch, most of whose changes change one
// job each, reusing what the last committed one left for it (recycle).
func (e *Engine) newCycle(now time.Time, batch []*op) *cycle {
	c := e.spare
	if c != nil {
		e.spare = nil
	} else {
		c = &cycle{jobs: make(map[string]*record.Job, len(batch)), resources: map[string]store.Resource{}}
	}
	// A copy: the caller's batch then stays its own (a driven
	// engine's is on its stack).
	c.now, c.ops = now, append(c.ops, batch...)
	return c
}

// recycleMax is the largest cycle whose maps and lists are kept for the
// next cycle: clearing a map costs what it once held, so a burst must not
// tax every cycle after it.
const recycleMax = 256

// recycle keeps a committed cycle's value for the next cycle, empty:
// allocating its maps anew was 4 % of a simulation's time.
// What was handed on (events, kept as the recent ones; dispatches and
// preemptions, to observers) is not reused.
func (e *Engine) recycle(c *cycle) {
	if len(c.ops) > recycleMax || len(c.jobs) > recycleMax || len(c.resources) > recycleMax || len(c.submitted) > recycleMax ||
		len(c.starts) > recycleMax || len(c.stops) > recycleMax || len(c.transitions) > recycleMax || len(c.touched) > recycleMax {
		return
	}
	clear(c.ops)
	clear(c.jobs)
	clear(c.resources)
	clear(c.submitted)
	clear(c.starts)
	clear(c.stops)
	clear(c.transitions)
	clear(c.touched)
	usage, preempted := c.usage[:0], c.preemptedAttempts[:0]
	if len(c.usage) > recycleMax || len(c.preemptedAttempts) > recycleMax {
		usage, preempted = nil, nil // after a full recount: too large to keep
	}
	clear(c.usage)
	clear(c.preemptedAttempts)
	*c = cycle{ops: c.ops[:0], jobs: c.jobs, resources: c.resources, submitted: c.submitted[:0], starts: c.starts[:0],
		stops: c.stops[:0], transitions: c.transitions[:0], touched: c.touched[:0],
		usage: usage, preemptedAttempts: preempted}
	e.spare = c
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
	e.timed = len(opts.Observers) > 0
	if d := opts.Driver; d != nil {
		e.driven, e.sink = true, d.Sink
	}
	if e.sink == nil { // a sink's engine keeps no job records to describe
		e.describes = describecache.New(describecache.DefaultLimit)
	}
	e.disp = newDispatcher(opts, e.log, e.postUpdate)
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
	e.model = batchmodel.New(e.modelConfig())
	e.jobs = map[string]*record.Job{}
	e.attempts = map[string]liveAttempt{}
	e.tokens = map[string]string{}
	e.waits = map[string]waitMark{}
	e.counts = map[string]int{}
	e.ended = nil
	e.lastQ = 0
	e.describes.Reset()
}

// do runs a change in a cycle and waits until the cycle is durable.
func (e *Engine) do(ctx context.Context, ch change) error {
	o := &op{change: ch, done: make(chan error, 1)}
	if e.driven {
		if err := e.drive(ctx, []*op{o}); err != nil {
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
// A driven engine keeps them for its next cycle.
func (e *Engine) post(ch change) {
	if e.driven {
		e.postedMu.Lock()
		e.posted = append(e.posted, &op{change: ch})
		e.postedMu.Unlock()
		return
	}
	select {
	case e.ops <- &op{change: ch}:
	case <-e.stopped:
	}
}

// postUpdate queues an executor report for the next cycle: the
// dispatcher's report of a start that failed, and the reports the
// reconciliation asked for.
func (e *Engine) postUpdate(u executor.Update) { e.post(report{u}) }

// report is the change an executor's report makes (handleUpdate).
type report struct{ u executor.Update }

func (r report) apply(e *Engine, c *cycle) error { e.handleUpdate(c, r.u); return nil }

// housekeep is the change housekeeping makes, once a second.
type housekeep struct{}

func (housekeep) apply(e *Engine, c *cycle) error { return e.housekeeping(c) }

// idle is a change that changes nothing: a cycle for the core alone.
type idle struct{}

func (idle) apply(*Engine, *cycle) error { return nil }

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
	e.post(idle{}) // a first cycle settles what load restored
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
			batch = append(batch, &op{change: report{u}})
		case <-tick.C:
			batch = append(batch, &op{change: housekeep{}})
		case <-wake.C:
			batch = append(batch, &op{change: idle{}}) // a cycle, for the core
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
// nothing waits for one. Run keeps a timer for it; a driven engine's
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
			batch = append(batch, &op{change: report{u}})
		default:
			return batch
		}
	}
	return batch
}

// cycle runs one cycle over a batch of changes: persist first, then act.
// A panic while deciding drops the whole cycle: its requests fail, nothing
// of it is committed, and the state is rebuilt from the store, as at a
// restart.
func (e *Engine) cycle(ctx context.Context, batch []*op) error {
	var begun time.Time
	if e.timed {
		begun = time.Now()
	}
	c, err := e.decide(ctx, batch)
	if err != nil {
		answerAll(batch, err)
		return err
	}
	if err := e.commit(ctx, c); err != nil {
		answerAll(c.ops, &Error{Code: Internal, Message: "internal error", Err: err})
		return err
	}
	answer(c)
	e.act(c)
	e.publish(c, begun)
	e.noteCycle(c)
	e.purgeStore(ctx, c)
	e.afterUsageCommit(ctx, c)
	e.recycle(c)
	return nil
}

// decide applies the batch and runs the core, under the lock; it returns
// the cycle, to commit and to act on.
func (e *Engine) decide(ctx context.Context, batch []*op) (c *cycle, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, e.recoverCycle(ctx, r)
		}
	}()
	c = e.newCycle(e.opts.Clock.Now(), batch)
	for _, o := range c.ops {
		o.err = o.change.apply(e, c)
	}
	e.step(c)
	e.wakeAt, _ = e.core.NextWake()
	e.accountUsage(c)
	e.describes.Publish(e.core, c.jobs)
	return c, nil
}

// commit writes the cycle's records to the store. Encoding them needs no
// lock: only a cycle changes them, and this is the only cycle running. So
// readers need not wait for it.
func (e *Engine) commit(ctx context.Context, c *cycle) error {
	if err := e.opts.Store.Commit(ctx, e.storeBatch(c)); err != nil {
		return fmt.Errorf("commit cycle: %w", err)
	}
	return nil
}

// answer tells each change's caller how it went, once the cycle is durable.
func answer(c *cycle) {
	for _, o := range c.ops {
		if o.done != nil {
			o.done <- o.err
		}
	}
}

// purgeStore forgets in the store the jobs that ended before the cycle's
// purge bound (ms), most of them never read since this start, and counts
// the jobs by status again. It reads and writes the store between cycles,
// in the loop, without mu: no cycle runs meanwhile, so the store holds
// what memory does.
func (e *Engine) purgeStore(ctx context.Context, c *cycle) {
	if c.purgeBefore == 0 {
		return
	}
	n, err := e.opts.Store.PurgeEnded(ctx, c.purgeBefore)
	if err != nil {
		e.log.Warn("purge ended jobs", "err", err)
	}
	if n == 0 { // always, for a sink's engine: the store holds no jobs
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

// cyclePanic is the error of a cycle that panicked.
type cyclePanic struct {
	value    any
	reloaded bool // the state was rebuilt from the store
}

func (p *cyclePanic) Error() string { return fmt.Sprintf("panic in a scheduling cycle: %v", p.value) }

// recoverCycle logs a cycle's panic with its stack, and rebuilds the state
// the cycle had half changed from the store, where none of it was
// committed. Reports the executor had sent in the cycle are asked for again
// by the reconciliation that follows the rebuild. The lock is held
// meanwhile: readers must not see the half-changed state.
func (e *Engine) recoverCycle(ctx context.Context, r any) error {
	e.log.Error("panic in a scheduling cycle: its changes are dropped and the state is reloaded from the store",
		"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	p := &cyclePanic{value: r}
	if e.sink != nil {
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
func (e *Engine) step(c *cycle) {
	e.applyDecisions(c, e.core.Step(c.now))
	if e.sink == nil {
		// An event each: grown once, not by doubling a slice of large values.
		c.events = slices.Grow(c.events, len(c.submitted))
	}
	for _, j := range c.submitted {
		if j.Status == StatusSubmitted {
			e.setStatus(c, j, StatusRunnable, c.now)
		}
	}
}

func (e *Engine) storeBatch(c *cycle) *store.Batch {
	b := &store.Batch{DeletedResources: c.deleted, Usage: c.usage, PreemptedAttempts: c.preemptedAttempts}
	for _, r := range c.resources {
		b.Resources = append(b.Resources, r)
	}
	b.Jobs = make([]store.Job, 0, len(c.jobs))
	for _, j := range c.jobs {
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
func (e *Engine) act(c *cycle) {
	for _, s := range c.starts {
		if len(s.waitFor) > 0 {
			e.disp.hold(s.attempt, s.waitFor, s.hold)
		}
	}
	for _, s := range c.stops {
		e.disp.stop(s.attempt, s.grace)
	}
	for _, s := range c.starts {
		if len(s.waitFor) == 0 {
			e.disp.start(s.attempt)
		}
	}
}

// touch marks a job record changed in the cycle. A sink's engine stores no
// job, and so lists none to commit.
func (e *Engine) touch(c *cycle, j *record.Job) {
	c.touched = append(c.touched, j)
	if e.sink == nil {
		c.jobs[j.JobID] = j
	}
}

func (e *Engine) touchResource(c *cycle, kind, arn string, r record.Record) {
	c.resources[arn] = store.Resource{Kind: kind, ARN: arn, Doc: record.Encode(r)}
}

func (e *Engine) deleteResource(c *cycle, arn string) {
	delete(c.resources, arn)
	c.deleted = append(c.deleted, arn)
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
