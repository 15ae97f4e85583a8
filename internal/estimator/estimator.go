package estimator

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

// Defaults of Config.Horizon and Config.MaxDecisions.
const (
	DefaultHorizon      = 24 * time.Hour
	DefaultMaxDecisions = 50_000
)

// minGap is the least time between two background computations.
const minGap = 100 * time.Millisecond

// rest is how many times as long as a background computation took the
// estimator rests after it: it takes at most a fifth of a CPU from the
// engine and the API, which busy servers with large queues need more.
const rest = 4

// interest is how long after the last read of the estimates the
// estimator keeps them fresh in the background.
const interest = time.Minute

// Observer hears that new start estimates are ready. It is told from the
// goroutine that computed them; it must be quick.
type Observer interface {
	ObserveEstimates()
}

// Source is where a computation takes its input from: the engine, which
// answers under its read lock. The estimator calls it only while it
// computes, never from a cycle.
type Source interface {
	// CopyLive copies the core and the dispatched jobs' times in one
	// piece: the one part of a computation that holds the cycles back.
	CopyLive() Live
	// JobFacts reads what never changes of the jobs named, in one short
	// read; a job no longer known is left out.
	JobFacts(ids []string) []Facts
}

// Live is what one computation works on, as Source.CopyLive takes it.
type Live struct {
	Now        time.Time           // the engine's clock when it copied
	Copy       *core.Copy          // the core's copy, not indexed yet: the estimator does that off the lock
	Dispatched map[string]Dispatch // the dispatched jobs' times, by ID
}

// Dispatch is when a dispatched job was dispatched (Unix ns) and started
// RUNNING (Unix ms; 0: not yet).
type Dispatch struct{ DispatchedAt, StartedAt int64 }

// Facts is what never changes of a job, as the estimator needs it.
type Facts struct {
	ID           string
	Queue, Share string
	Demand       []record.UnitCount
	Timeout      int    // timeoutConfig.attemptDurationSeconds; 0: none
	Payload      string // the service request payload, read for its MaxRuntimeInSeconds
}

// Config tells an Estimator how far to look and whom to tell.
type Config struct {
	// Horizon is how far ahead the estimates look (default
	// DefaultHorizon).
	Horizon time.Duration
	// MaxDecisions bounds the core's decisions in one computation
	// (default DefaultMaxDecisions).
	MaxDecisions int
	// Observers hear of each new result.
	Observers []Observer
	// Logger takes the errors of background computations.
	Logger *slog.Logger
}

// Estimator keeps the latest start estimates; its methods are safe for
// concurrent use.
type Estimator struct {
	src Source
	cfg Config

	latest   atomic.Pointer[forecast.Result]
	wake     chan struct{} // something changed since the last computation
	lastRead atomic.Int64  // when the estimates were last read (Unix ns)
	stale    atomic.Bool   // something changed that no computation has seen: nobody was reading
	history  runHistory

	mu   sync.Mutex           // one computation at a time; guards jobs
	jobs map[string]*jobFacts // what never changes of the live jobs, by ID
}

// New returns an estimator that copies its input from src. It computes
// only when asked (Compute) until Start.
func New(src Source, cfg Config) *Estimator {
	if cfg.Horizon <= 0 {
		cfg.Horizon = DefaultHorizon
	}
	if cfg.MaxDecisions <= 0 {
		cfg.MaxDecisions = DefaultMaxDecisions
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Estimator{src: src, cfg: cfg, wake: make(chan struct{}, 1), jobs: map[string]*jobFacts{},
		history: runHistory{byShare: map[string]*runTimes{}, byShape: map[string]*runTimes{}}}
}

// Latest returns the latest estimates; nil before the first. It counts as
// a read: the background keeps the estimates fresh for a while after it,
// and a read after the estimator rested computes them first.
func (x *Estimator) Latest() *forecast.Result {
	x.lastRead.Store(time.Now().UnixNano())
	if x.stale.Swap(false) {
		r, err := x.Compute()
		if err == nil {
			return r
		}
		x.cfg.Logger.Error("estimate start times", "err", err)
	}
	return x.latest.Load()
}

// Kept returns the latest estimates without reading them: it wakes
// nothing.
func (x *Estimator) Kept() *forecast.Result { return x.latest.Load() }

// read tells whether someone read the estimates lately.
func (x *Estimator) read() bool {
	return time.Since(time.Unix(0, x.lastRead.Load())) < interest
}

// Compute estimates now when each waiting job starts, keeps the result
// for Latest and returns it. The background does this once started; a
// caller that does not start it calls Compute when it wants fresh
// estimates.
func (x *Estimator) Compute() (res *forecast.Result, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("panic while estimating start times: %v\n%s", r, debug.Stack())
		}
	}()
	lv := x.src.CopyLive()
	hist := x.history.snapshot()
	c := lv.Copy.Core()
	res, err = forecast.Run(c, x.input(lv, c, hist))
	if err != nil {
		return nil, err
	}
	x.latest.Store(res)
	for _, o := range x.cfg.Observers {
		o.ObserveEstimates()
	}
	return res, nil
}

// RecordRunTime adds to the history that a job of the queue's share and
// of the demand held its capacity for d, from dispatch to its success.
func (x *Estimator) RecordRunTime(queue, share string, demand []record.UnitCount, d time.Duration) {
	x.history.add(queue, share, demand, d)
}

// NoteCycle hears that a cycle committed at now, and whether it changed
// something. It wakes the background when it did, or when the first end
// the latest estimates expected has come; while nobody reads them, it
// only marks them stale.
func (x *Estimator) NoteCycle(changed bool, now time.Time) {
	if r := x.latest.Load(); !changed && r != nil && (r.Next.IsZero() || now.Before(r.Next)) {
		return
	}
	if !x.read() {
		x.stale.Store(true)
		return
	}
	x.poke()
}

func (x *Estimator) poke() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// Start starts the background computations and returns what stops them
// and waits for their goroutine to end. Until the first read the
// estimates are stale.
func (x *Estimator) Start() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { x.run(done) })
	x.stale.Store(true)
	return func() { close(done); wg.Wait() }
}

// run keeps the estimates fresh until done is closed: it computes when
// woken, and rests after each computation (rest).
func (x *Estimator) run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-x.wake:
		}
		start := time.Now()
		if _, err := x.Compute(); err != nil {
			x.cfg.Logger.Error("estimate start times", "err", err)
		}
		took := time.Since(start)
		x.cfg.Logger.Debug("start times estimated", "took", took)
		select {
		case <-done:
			return
		case <-time.After(max(rest*took, minGap)):
		}
	}
}
