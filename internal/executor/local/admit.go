package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

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
		return true
	})
	e.mu.Unlock()
	for _, at := range ready {
		go e.launch(at)
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

// launch starts the attempt's supervisor, unless Stop ended it meanwhile.
func (e *Executor) launch(at *attempt) {
	at.mu.Lock()
	defer at.mu.Unlock()
	e.mu.Lock()
	ph, gpus := at.phase, at.gpus
	e.mu.Unlock()
	if ph != launched {
		return
	}
	spec := at.plan.assign(splitGPUs(gpus, at.plan.need), len(e.opts.GPUs) > 0)
	at.plan = nil
	if err := e.startSupervisor(at, spec); err != nil {
		e.log.Error("start supervisor", "attempt", at.id, "err", err)
		e.failLocked(at, "CannotStart: "+err.Error())
	}
}

func splitGPUs(gpus []int, need []int) [][]int {
	out := make([][]int, len(need))
	for i, n := range need {
		out[i], gpus = gpus[:n:n], gpus[n:]
	}
	return out
}

// startSupervisor runs the supervisor in its own session so that signals
// to the server's process group (a Ctrl-C, a service stop) do not reach
// training. The executor locks the lock file before the supervisor exists
// and hands it over, so the attempt is never seen unlocked while it is
// starting.
func (e *Executor) startSupervisor(at *attempt, spec launchSpec) error {
	if err := writeJSON(at.dir, launchFile, spec); err != nil {
		return err
	}
	lock, err := takeLock(at.dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	logf, err := os.OpenFile(filepath.Join(at.dir, supervisorLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open supervisor log: %w", err)
	}
	defer logf.Close()
	e.watchLocked(at)
	args := append(append([]string{}, e.opts.SupervisorCommand[1:]...), at.dir)
	cmd := exec.Command(e.opts.SupervisorCommand[0], args...)
	cmd.Dir = at.dir // not the server's directory, which may go away
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{lock} // becomes lockFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	at.child = true
	go func() {
		err := cmd.Wait()
		e.check(at, true, err)
	}()
	return nil
}

// lostTransition is how an attempt ends whose supervisor died without
// recording an end. A supervisor that exited on its own before starting
// anything (a broken SupervisorCommand) could not start the job; anything
// else lost the attempt.
func (e *Executor) lostTransition(at *attempt, st status, exitErr error) transition {
	var ee *exec.ExitError
	if len(st.History) == 0 && errors.As(exitErr, &ee) && ee.Exited() {
		tail := stderrTail(filepath.Join(at.dir, supervisorLog), 300)
		return transition{State: executor.Failed, Reason: fmt.Sprintf("CannotStart: supervisor %v: %s", exitErr, tail)}
	}
	reason := "attempt processes vanished (supervisor died)"
	switch {
	case st.BootID != "" && st.BootID != e.bootID:
		reason = "attempt processes vanished (host restarted)"
	case exitErr != nil:
		reason = fmt.Sprintf("attempt processes vanished (supervisor exited: %v)", exitErr)
	}
	return transition{State: executor.Lost, Reason: reason}
}
