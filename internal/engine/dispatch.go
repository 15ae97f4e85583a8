package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// dispatcher makes the executor calls that committed cycles decided, off
// the engine's loop: a slow executor (a remote API at tens of milliseconds
// a call) then holds up no API write. Calls go to a fixed set of workers;
// the calls for one attempt always go to the same worker, so they are made
// in the order they were decided. A transient error is retried with
// backoff; a permanent one (executor.ErrPermanent), or a start that keeps
// failing, fails the attempt.
//
// It also holds a preemptor's start until every attempt preempted for it
// has reported that it stopped: the capacity it is given is theirs.
//
// A driven engine (the simulator) makes every call at once, in order,
// in the caller's goroutine, without retries.
type dispatcher struct {
	ex  executor.Executor
	log logger
	// stopTimeout is how much longer than its victims' grace period a
	// start waits for them at most.
	stopTimeout time.Duration
	tries       int           // start attempts before the attempt fails
	backoff     time.Duration // the first retry's delay; it doubles, up to maxBackoff
	inline      bool
	lease       Lease // nil: the server is alone on its store
	// failed reports a start that cannot be made as the attempt's failure.
	failed func(executor.Update)

	mu       sync.Mutex
	held     map[string]*heldStart // by the preemptor's attempt ID
	victimOf map[string][]string   // victim attempt ID → preemptors waiting for it
	closed   bool

	ctx     context.Context
	cancel  context.CancelFunc
	workers []chan call
	wg      sync.WaitGroup
}

const maxBackoff = 5 * time.Second

type logger interface {
	Info(string, ...any)
	Warn(string, ...any)
	Error(string, ...any)
	Debug(string, ...any)
}

// heldStart is a preemptor's start waiting for its victims to stop.
type heldStart struct {
	a       executor.Attempt
	victims map[string]bool
	wait    time.Duration // the most it waits for them
	timer   *time.Timer
}

// call is one executor call: a start, or a stop (with its grace period)
// when start is nil.
type call struct {
	start *executor.Attempt
	stop  string
	grace time.Duration
}

func (c call) attempt() string {
	if c.start != nil {
		return c.start.ID
	}
	return c.stop
}

func newDispatcher(opts Options, log logger, failed func(executor.Update)) *dispatcher {
	d := &dispatcher{
		ex: opts.Executor, log: log, stopTimeout: opts.StopTimeout,
		tries: opts.StartTries, backoff: opts.RetryBackoff, inline: opts.Driver != nil, failed: failed, lease: opts.Lease,
		held: map[string]*heldStart{}, victimOf: map[string][]string{},
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if d.inline || d.ex == nil {
		return d
	}
	d.workers = make([]chan call, opts.ExecutorWorkers)
	for i := range d.workers {
		ch := make(chan call, 1024)
		d.workers[i] = ch
		d.wg.Go(func() { d.work(ch) })
	}
	return d
}

// work makes the calls sent to one worker, in order, until its channel
// is closed.
func (d *dispatcher) work(calls <-chan call) {
	for c := range calls {
		d.make(c)
	}
}

// close stops the workers once the calls already queued are made (or, for
// retries, abandoned: the next start reconciles them).
func (d *dispatcher) close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	for _, h := range d.held {
		if h.timer != nil {
			h.timer.Stop()
		}
	}
	d.mu.Unlock()
	d.cancel()
	for _, ch := range d.workers {
		close(ch)
	}
	d.wg.Wait()
}

// start starts the attempt.
func (d *dispatcher) start(a executor.Attempt) {
	if d.ex != nil {
		d.send(call{start: &a})
	}
}

// hold starts the attempt once every attempt in waitFor has reported that
// it stopped, or grace (the longest of theirs) and the stop timeout after.
// Hold a cycle's preemptors before stopping its victims, so that a victim
// whose own start was still held, and is dropped, releases them.
func (d *dispatcher) hold(a executor.Attempt, waitFor []string, grace time.Duration) {
	if d.ex == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	h := &heldStart{a: a, victims: map[string]bool{}, wait: grace + d.stopTimeout}
	for _, v := range waitFor {
		h.victims[v] = true
		d.victimOf[v] = append(d.victimOf[v], a.ID)
	}
	d.held[a.ID] = h
	if !d.inline {
		// A victim the executor does not report on (lost, say) must not
		// hold the capacity forever.
		h.timer = time.AfterFunc(h.wait, func() { d.release(a.ID, true) })
	}
}

// stop stops the attempt with grace; a start still held for its victims
// is dropped.
func (d *dispatcher) stop(id string, grace time.Duration) {
	if d.ex == nil {
		return
	}
	d.mu.Lock()
	if h := d.held[id]; h != nil {
		d.forgetLocked(id, h)
		d.mu.Unlock()
		d.ended(id) // it never started: whoever waits for it need not
		return
	}
	d.mu.Unlock()
	d.send(call{stop: id, grace: grace})
}

// ended hears that an attempt has stopped for good: the starts that waited
// only for it go ahead.
func (d *dispatcher) ended(id string) {
	d.mu.Lock()
	waiting := d.victimOf[id]
	delete(d.victimOf, id)
	var ready []string
	for _, p := range waiting {
		if h := d.held[p]; h != nil {
			delete(h.victims, id)
			if len(h.victims) == 0 {
				ready = append(ready, p)
			}
		}
	}
	d.mu.Unlock()
	for _, p := range ready {
		d.release(p, false)
	}
}

// release sends a held start on; late says its victims never all reported.
func (d *dispatcher) release(id string, late bool) {
	d.mu.Lock()
	h := d.held[id]
	if h == nil || d.closed {
		d.mu.Unlock()
		return
	}
	d.forgetLocked(id, h)
	d.mu.Unlock()
	if late {
		d.log.Warn("starting an attempt although the attempts preempted for it have not reported stopping",
			"attempt", id, "victims", slices.Sorted(maps.Keys(h.victims)), "waited", h.wait)
	}
	d.send(call{start: &h.a})
}

func (d *dispatcher) forgetLocked(id string, h *heldStart) {
	delete(d.held, id)
	if h.timer != nil {
		h.timer.Stop()
	}
	for v := range h.victims {
		ps := d.victimOf[v]
		for i, p := range ps {
			if p == id {
				ps = append(ps[:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(d.victimOf, v)
		} else {
			d.victimOf[v] = ps
		}
	}
}

func (d *dispatcher) send(c call) {
	if d.inline {
		d.make(c)
		return
	}
	h := fnv.New32a()
	h.Write([]byte(c.attempt()))
	// NB: sending under mu keeps close from closing the channel meanwhile;
	// the workers never take mu, so a full channel drains.
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // stopping: the next start reconciles with the executor
	}
	d.workers[h.Sum32()%uint32(len(d.workers))] <- c
}

// make makes one call, retrying transient errors. A server whose lease is
// no longer held makes none: the next leader decides again. A start's
// payload is parsed here, once for all its tries.
func (d *dispatcher) make(c call) {
	if c.start != nil {
		readRequest(c.start)
	}
	for try := 1; ; try++ {
		if d.lease != nil && !d.lease.Held() {
			d.log.Warn("executor call dropped: the leadership lease is not held", "attempt", c.attempt())
			return
		}
		var err error
		if c.start != nil {
			err = d.ex.Start(d.ctx, *c.start)
		} else {
			err = d.ex.Stop(d.ctx, c.stop, c.grace)
		}
		if err == nil || d.ctx.Err() != nil {
			return
		}
		permanent := errors.Is(err, executor.ErrPermanent) || d.inline
		if c.start != nil && (permanent || try >= d.tries) {
			d.log.Warn("start attempt", "attempt", c.start.ID, "job", c.start.JobID, "tries", try, "err", err)
			d.failed(executor.Update{AttemptID: c.start.ID, JobID: c.start.JobID, State: executor.Failed,
				Reason: "CannotStart: " + err.Error(), ExitCode: -1})
			return
		}
		if c.start == nil && d.inline {
			d.log.Warn("stop attempt", "attempt", c.stop, "err", err)
			return
		}
		delay := min(maxBackoff, d.backoff<<min(try-1, 16))
		d.log.Warn("executor call failed; retrying", "attempt", c.attempt(), "try", try, "in", delay, "err", err)
		select {
		case <-time.After(delay):
		case <-d.ctx.Done():
			return
		}
	}
}
