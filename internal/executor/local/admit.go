package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sharq-dev/sharq/internal/executor"
)

// admit starts every queued attempt for which enough GPUs are free, in
// arrival order. An attempt that does
// not fit does not hold back smaller ones behind it: the scheduler's
// capacity accounting, not this queue, decides who runs.
func (e *Executor) admit() {
	e.mu.Lock()
	if e.closed || !e.loaded || e.opts.Held != nil && !e.opts.Held() {
		e.mu.Unlock()
		return
	}
	var ready []*attempt
	e.queue = slices.DeleteFunc(e.queue, func(at *attempt) bool {
		if !e.allocateLocked(at) {
			return false
		}
		at.phase = launched
		ready = append(ready, at)
		e.wg.Add(1) // under e.mu, not closed: Close waits for it
		return true
	})
	e.mu.Unlock()
	for _, at := range ready {
		go func() {
			defer e.wg.Done()
			e.launch(at)
		}()
	}
}

// allocateLocked takes the lowest free GPUs for the attempt's hosts, all
// or nothing.
func (e *Executor) allocateLocked(at *attempt) bool {
	if len(e.opts.GPUs) == 0 {
		return true
	}
	total := 0
	for _, n := range at.plan.need {
		total += n
	}
	var free []int
	for _, g := range e.opts.GPUs {
		if _, used := e.gpuOwner[g]; !used {
			free = append(free, g)
		}
	}
	if len(free) < total {
		return false
	}
	at.gpus = free[:total]
	for _, g := range at.gpus {
		e.gpuOwner[g] = at.id
	}
	return true
}

// launch stages the attempt's data, then hands it to the supervisor,
// unless Stop ended it meanwhile.
func (e *Executor) launch(at *attempt) {
	if !e.stageAttempt(at) {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	e.mu.Lock()
	ph, gpus := at.phase, at.gpus
	e.mu.Unlock()
	if ph != launched {
		return
	}
	spec, err := at.plan.assign(splitGPUs(gpus, at.plan.need), len(e.opts.GPUs) > 0)
	at.plan = nil
	if err == nil {
		err = e.handOver(at, spec)
	}
	switch {
	case errors.Is(err, ErrClosed):
		// Left as it is, without a start: the next executor launches it.
	case err != nil:
		e.log.Error("hand attempt to the supervisor", "attempt", at.id, "err", err)
		e.failLocked(at, "CannotStart: "+err.Error())
	}
}

// stageAttempt writes the attempt's trees and stages its data, and tells
// whether it may go on to run. A Stop meanwhile cancels the staging and
// ends the attempt Stopped; a channel that cannot be read fails it, with
// nothing staged left behind.
func (e *Executor) stageAttempt(at *attempt) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.mu.Lock()
	p := at.plan
	at.cancelStage = cancel
	e.mu.Unlock()
	if _, err := os.Stat(filepath.Join(at.dir, stopFile)); err == nil {
		cancel() // a Stop came before there was staging to cancel
	}
	go func() {
		select {
		case <-e.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := e.stage(ctx, at, p)
	e.mu.Lock()
	at.cancelStage = nil
	e.mu.Unlock()
	if err == nil {
		return true
	}
	if e.isClosed() {
		return false // the next executor stages it again, and cleans up first
	}
	removeStaged(p)
	if err := e.removeContainers(context.Background(), &p.spec, executor.Failed); err != nil {
		e.log.Warn("remove the attempt's containers and network", "attempt", at.id, "err", err)
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if _, err := os.Stat(filepath.Join(at.dir, stopFile)); err == nil {
		e.endLocked(at, transition{State: executor.Stopped, Reason: "Stopped"})
		return false
	}
	if errors.Is(err, errCannotStart) {
		e.failLocked(at, err.Error())
		return false
	}
	e.failLocked(at, "ClientError: "+err.Error())
	return false
}

func splitGPUs(gpus []int, need []int) [][]int {
	out := make([][]int, len(need))
	for i, n := range need {
		out[i], gpus = gpus[:n:n], gpus[n:]
	}
	return out
}

// handOver writes the launch spec and sends the attempt to the
// supervisor with its lock file, which the executor locks first: the
// attempt is never seen unlocked while it is being handed over.
func (e *Executor) handOver(at *attempt, spec launchSpec) error {
	if err := writeJSON(at.dir, launchFile, spec); err != nil {
		return err
	}
	lock, err := takeLock(at.dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	e.watchLocked(at)
	if err := e.sup.launch(at.id, lock); err != nil {
		return err
	}
	at.spec = &spec
	at.handed = true
	return nil
}

// lostTransition is how an attempt ends whose supervisor went away
// without recording its end; exitErr is the supervisor's exit status when
// this process started it.
func (e *Executor) lostTransition(st status, exitErr error) transition {
	reason := "attempt processes vanished (supervisor died)"
	switch {
	case st.BootID != "" && st.BootID != e.bootID:
		reason = "attempt processes vanished (host restarted)"
	case exitErr != nil:
		reason = fmt.Sprintf("attempt processes vanished (supervisor exited: %v)", exitErr)
	}
	return transition{State: executor.Lost, Reason: reason}
}
