// Package simulated is an executor that runs nothing: an attempt "runs" for
// a duration taken from its payload and then succeeds. It serves benchmarks
// and demos.
//
// The runtime of an attempt is, in order of precedence:
//   - the payload's Environment variable SHARQ_SIMULATED_RUNTIME_MS
//     (milliseconds);
//   - StoppingCondition.MaxRuntimeInSeconds;
//   - otherwise the attempt runs until it is stopped.
//
// SHARQ_SIMULATED_EXIT_CODE, when set and not 0, makes the attempt fail
// with that exit code instead of succeeding.
package simulated

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Executor is the simulated executor.
type Executor struct {
	mu       sync.Mutex
	attempts map[string]*attempt
	closed   bool

	// Updates queue without bound and a pump delivers them, so that
	// emitting never blocks a caller holding mu.
	queue   []executor.Update
	wake    *sync.Cond
	updates chan executor.Update
}

type attempt struct {
	id, job string
	state   executor.State
	timer   *time.Timer
	waiting int // victims still to exit
}

// New returns a simulated executor.
func New() *Executor {
	x := &Executor{attempts: map[string]*attempt{}, updates: make(chan executor.Update, 1024)}
	x.wake = sync.NewCond(&x.mu)
	go x.pump()
	return x
}

func (x *Executor) pump() {
	x.mu.Lock()
	for {
		for len(x.queue) == 0 && !x.closed {
			x.wake.Wait()
		}
		if x.closed {
			x.mu.Unlock()
			return
		}
		u := x.queue[0]
		x.queue = x.queue[1:]
		x.mu.Unlock()
		x.updates <- u
		x.mu.Lock()
	}
}

// plan reads how long the attempt runs (0: until stopped) and its exit code.
func plan(a executor.Attempt) (time.Duration, int, error) {
	pl, err := a.ReadRequest()
	if err != nil {
		return 0, 0, err
	}
	code := 0
	if v := pl.Environment["SHARQ_SIMULATED_EXIT_CODE"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, fmt.Errorf("SHARQ_SIMULATED_EXIT_CODE: %w", err)
		}
		code = n
	}
	// Durations beyond a time.Duration would wrap around when multiplied
	// out, to any value, negative or a moment.
	if v := pl.Environment["SHARQ_SIMULATED_RUNTIME_MS"]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
			return 0, 0, fmt.Errorf("SHARQ_SIMULATED_RUNTIME_MS %q is not a number of milliseconds", v)
		}
		return time.Duration(n) * time.Millisecond, code, nil
	}
	// A MaxRuntimeInSeconds that is not positive, or too long to hold, is
	// no limit.
	if n := pl.StoppingCondition.MaxRuntimeInSeconds; n > 0 && int64(n) <= math.MaxInt64/int64(time.Second) {
		return time.Duration(n) * time.Second, code, nil
	}
	return 0, code, nil
}

// Start begins an attempt once the attempts it waits for have stopped.
func (x *Executor) Start(ctx context.Context, a executor.Attempt) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.attempts[a.ID] != nil {
		return nil
	}
	at := &attempt{id: a.ID, job: a.JobID, state: "PENDING"}
	x.attempts[a.ID] = at
	run, code, err := plan(a)
	if err != nil {
		x.end(at, executor.Failed, "CannotStart: "+err.Error(), -1)
		return nil
	}
	x.emit(at, executor.Starting, "", 0)
	x.emit(at, executor.Running, "", 0)
	if a.Timeout > 0 && (run == 0 || a.Timeout < run) {
		at.timer = time.AfterFunc(a.Timeout, func() { x.finish(at, executor.Stopped, "Attempt duration exceeded", -1) })
		return nil
	}
	if run > 0 {
		at.timer = time.AfterFunc(run, func() {
			if code != 0 {
				x.finish(at, executor.Failed, fmt.Sprintf("exit code %d", code), code)
				return
			}
			x.finish(at, executor.Succeeded, "", 0)
		})
	}
	return nil
}

func (x *Executor) finish(at *attempt, s executor.State, reason string, code int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !at.state.Terminal() {
		x.end(at, s, reason, code)
	}
}

func (x *Executor) end(at *attempt, s executor.State, reason string, code int) {
	if at.timer != nil {
		at.timer.Stop()
	}
	x.emit(at, s, reason, code)
}

func (x *Executor) emit(at *attempt, s executor.State, reason string, code int) {
	at.state = s
	if x.closed {
		return
	}
	x.queue = append(x.queue, executor.Update{AttemptID: at.id, JobID: at.job, State: s, Reason: reason, ExitCode: code, At: time.Now()})
	x.wake.Signal()
}

// Stop ends an attempt at once: there is nothing to wait for.
func (x *Executor) Stop(ctx context.Context, id string, grace time.Duration) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if at := x.attempts[id]; at != nil && !at.state.Terminal() {
		x.end(at, executor.Stopped, "Stopped", -1)
	}
	return nil
}

// Updates delivers attempt state changes.
func (x *Executor) Updates() <-chan executor.Update { return x.updates }

// Attempts lists the attempts of this process; nothing survives a restart.
func (x *Executor) Attempts(ctx context.Context) ([]executor.Update, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []executor.Update
	for _, at := range x.attempts {
		out = append(out, executor.Update{AttemptID: at.id, JobID: at.job, State: at.state})
	}
	return out, nil
}

// Close stops delivering updates.
func (x *Executor) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	x.wake.Broadcast()
	for _, at := range x.attempts {
		if at.timer != nil {
			at.timer.Stop()
		}
	}
	return nil
}
