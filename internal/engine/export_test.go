package engine

import (
	"context"
	"fmt"

	"github.com/sharq-dev/sharq/internal/describecache"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

// ApplyInstantThenPanic applies in as ApplyInstant does, with one more
// change at the end that panics, as a bug in a cycle would.
func ApplyInstantThenPanic(ctx context.Context, e *Engine, in Instant) (InstantResult, error) {
	res := InstantResult{Jobs: make([]record.Job, len(in.Submits)), SubmitErrs: make([]error, len(in.Submits)),
		ChangeErrs: make([]error, len(in.Changes))}
	ops := append(e.instantOps(in, &res, nil), &op{change: changeFunc(func(*cycle) error { panic("a bug in a cycle") })})
	return res, e.drive(ctx, ops)
}

// PanicInCycle sends the running engine a change that panics, as a bug in
// a cycle would, and returns what its caller is answered.
func PanicInCycle(ctx context.Context, e *Engine) error {
	return e.do(ctx, changeFunc(func(*cycle) error { panic("a bug in a cycle") }))
}

// CopyForEstimates takes the copy a start estimate works on under the
// engine's lock, as ComputeStartEstimates does, and throws it away.
func CopyForEstimates(e *Engine) { estimateSource{e}.CopyLive() }

// LatestEstimates returns the latest start estimates without reading them
// as a client does (which would wake a resting estimator).
func LatestEstimates(e *Engine) *forecast.Result { return e.est.Kept() }

// CheckAttemptHandles checks that every live attempt keeps its job's
// handle in the core, so that its end finds the job by handle.
func CheckAttemptHandles(e *Engine) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for id, la := range e.attempts {
		if h := e.core.Handle(la.job); la.handle == 0 || la.handle != h {
			return fmt.Errorf("attempt %s of job %s keeps handle %x, the core has %x", id, la.job, la.handle, h)
		}
	}
	return nil
}

// HoldLock takes the engine's lock as a cycle does, until release.
func HoldLock(e *Engine) (release func()) {
	e.mu.Lock()
	return e.mu.Unlock
}

// DescribeLocked describes a job as a describe that finds no kept copy
// does: under the engine's lock when it is in memory, else from the store.
func DescribeLocked(e *Engine, id string) (record.Job, error) {
	e.mu.RLock()
	if j := e.jobs[e.jobID(id)]; j != nil {
		defer e.mu.RUnlock()
		return e.view(j), nil
	}
	purged := e.purgedBefore
	e.mu.RUnlock()
	j, err := e.readStored(context.Background(), id, purged)
	if err != nil {
		return record.Job{}, err
	}
	return *j, nil
}

// KeptReads is how many jobs an engine keeps for describes without its
// lock, unless KeepReads says otherwise.
const KeptReads = describecache.DefaultLimit

// KeepReads sets how many jobs the engine keeps for describes without its
// lock, and returns how many it keeps now.
func KeepReads(e *Engine, limit int64) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if limit > 0 {
		e.describes.SetLimit(limit)
	}
	return e.describes.Kept()
}

// HeadlessReads counts the describes that found a kept waiting job whose
// share had no head published: a cycle left the head out.
func HeadlessReads(e *Engine) int64 { return e.describes.Headless() }

// LockHeld tells whether the engine's lock is held, to write or to read.
func LockHeld(e *Engine) bool {
	if e.mu.TryLock() {
		e.mu.Unlock()
		return false
	}
	return true
}
