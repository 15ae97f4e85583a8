package engine

import (
	"sync/atomic"
	"time"
)

// ReadWaits counts the reads made under the engine's lock from outside its
// loop (the API, the console, metrics) and those that found it taken (or
// wanted) by a cycle, with how long they waited in all. Under heavy writes
// reads queue behind cycles; most of such a wait is a lock holder taken off
// its core by the scheduler, not the cycle's work. Unlocked counts the
// describes served without the lock (reads).
type ReadWaits struct {
	Reads, Waited int64
	Wait          time.Duration
	Unlocked      int64
}

type readWaits struct{ reads, waited, waitNs, unlocked atomic.Int64 }

// rlock takes the read lock for a read from outside the loop, counting
// it, and timing it when it must wait.
func (e *Engine) rlock() {
	e.readWaits.reads.Add(1)
	if e.mu.TryRLock() {
		return
	}
	start := time.Now()
	e.mu.RLock()
	e.readWaits.waited.Add(1)
	e.readWaits.waitNs.Add(int64(time.Since(start)))
}

// ReadWaits reports the reads so far, and those that waited.
func (e *Engine) ReadWaits() ReadWaits {
	return ReadWaits{
		Reads:    e.readWaits.reads.Load(),
		Waited:   e.readWaits.waited.Load(),
		Wait:     time.Duration(e.readWaits.waitNs.Load()),
		Unlocked: e.readWaits.unlocked.Load(),
	}
}
