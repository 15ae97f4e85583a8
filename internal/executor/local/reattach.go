package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// reattach loads the attempts of a previous executor: 1) ended ones are
// kept for Attempts (or removed past Retention), 2) live supervisors are
// watched again, 3) attempts whose supervisor never started are queued
// again, 4) attempts whose supervisor died without an end become Lost.
func (e *Executor) reattach() {
	ents, err := os.ReadDir(e.root)
	if err != nil {
		e.log.Error("scan attempts", "err", err)
		return
	}
	for _, ent := range ents {
		if ent.IsDir() {
			e.load(ent.Name())
		}
	}
}

func (e *Executor) load(id string) {
	dir := filepath.Join(e.root, id)
	var rec record
	if err := readJSON(filepath.Join(dir, attemptFile), &rec); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			e.log.Warn("load attempt", "attempt", id, "err", err)
		}
		return // Start never completed: nobody was told of it
	}
	at := &attempt{id: id, jobID: rec.Attempt.JobID, dir: dir, created: rec.Created, phase: launched}
	at.mu.Lock()
	defer at.mu.Unlock()
	st, alive, err := e.liveStatus(dir)
	if err != nil {
		e.log.Warn("load attempt", "attempt", id, "err", err)
	}
	at.reported = len(st.History)
	at.last, _ = st.last()
	if st.ended() && e.expired(at.last.At) {
		os.RemoveAll(dir)
		return
	}
	if len(st.History) > 0 {
		at.spec = readSpec(dir) // handed over: the after phase needs it
	}
	e.mu.Lock()
	e.attempts[id] = at
	e.mu.Unlock()
	switch {
	case awaitsOutputs(at.spec, st):
		// It ended while no executor listened, its outputs unsent: it
		// holds its GPUs until they are, and reports the end then.
		e.reserveGPUs(at, at.spec)
		at.reported, at.last = len(st.History)-1, transition{}
		if n := len(st.History); n >= 2 {
			at.last = st.History[n-2]
		}
		e.emitLocked(at, st)
	case st.ended():
		at.phase = ended
	case alive:
		e.adopt(at)
	case len(st.History) == 0:
		e.enqueueLocked(at, rec.Attempt)
	default:
		e.reserveGPUs(at, at.spec) // until its after phase is done
		e.loseLocked(at, st, e.sup.exitStatus(st.Supervisor, 0))
	}
}

// liveStatus reads the state and whether the supervisor lives. NB: the
// supervisor records its end before it releases the lock, so the state is
// read again once the lock is seen free.
func (e *Executor) liveStatus(dir string) (status, bool, error) {
	st, err := readStatus(dir)
	if err != nil || st.ended() {
		return st, false, err
	}
	held, err := lockHeld(dir)
	if err != nil || held {
		return st, held, err
	}
	st, err = readStatus(dir)
	return st, false, err
}

// adopt watches a live supervisor started by a previous executor and takes
// back the GPUs its instances hold.
func (e *Executor) adopt(at *attempt) {
	var spec launchSpec
	if err := readJSON(filepath.Join(at.dir, launchFile), &spec); err != nil {
		e.log.Warn("read launch spec", "attempt", at.id, "err", err)
	}
	at.spec = &spec
	at.grace, at.handed = spec.GraceOverride, true
	e.reserveGPUs(at, &spec)
	e.watchLocked(at)
	// A transition between the read above and the watch has no event.
	st, _ := readStatus(at.dir)
	if e.emitLocked(at, st) {
		e.finishLocked(at)
	}
}

// reserveGPUs takes back the GPUs the attempt's hosts were given.
func (e *Executor) reserveGPUs(at *attempt, spec *launchSpec) {
	if spec == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range spec.Hosts {
		for _, g := range h.GPUs {
			e.gpuOwner[g] = at.id
			at.gpus = append(at.gpus, g)
		}
	}
}

// readSpec reads an attempt's launch spec, nil when it was not handed
// over.
func readSpec(dir string) *launchSpec {
	var spec launchSpec
	if readJSON(filepath.Join(dir, launchFile), &spec) != nil {
		return nil
	}
	return &spec
}

func (e *Executor) expired(at time.Time) bool {
	return e.opts.Retention > 0 && time.Since(at) > e.opts.Retention
}

// sweep removes ended attempts whose end is older than the retention.
func (e *Executor) sweep() {
	var done []*attempt
	e.mu.Lock()
	for _, at := range e.attempts {
		if at.phase == ended {
			done = append(done, at)
		}
	}
	e.mu.Unlock()
	for _, at := range done {
		at.mu.Lock()
		old := e.expired(at.last.At)
		at.mu.Unlock()
		if !old {
			continue
		}
		e.mu.Lock()
		delete(e.attempts, at.id)
		e.mu.Unlock()
		if err := os.RemoveAll(at.dir); err != nil {
			e.log.Warn("remove attempt", "attempt", at.id, "err", err)
		}
	}
}
