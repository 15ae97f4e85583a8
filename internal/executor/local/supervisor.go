package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// SupervisorArg is the hidden first argument that makes the sharq binary run
// as an attempt supervisor (see SupervisorMain).
const SupervisorArg = "__supervise"

// lockFD is where the executor hands the supervisor its locked lock file.
const lockFD = 3

// prSetChildSubreaper makes orphaned descendants children of the caller.
const prSetChildSubreaper = 36

// SupervisorMain runs the supervisor of the attempt whose directory is
// args[0] and returns the process's exit code. The sharq binary calls it
// when started as "sharq __supervise <dir>"; the attempt's outcome is in
// state.json, not in the exit code.
func SupervisorMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: sharq "+SupervisorArg+" ATTEMPT_DIR")
		return 2
	}
	// Pdeathsig fires when the thread that forked an instance ends: fork
	// from this one, which lives as long as the process.
	runtime.LockOSThread()
	s, err := newSupervisor(args[0])
	if err == nil {
		err = s.run()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "supervise %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// host is an instance process as the supervisor tracks it.
type host struct {
	spec hostSpec
	pid  int
	done bool
	ws   syscall.WaitStatus
}

// ending says why the attempt is ending, once something decided it should.
type ending struct {
	state  executor.State // Stopped or Failed
	reason string         // for Stopped, and for a Failed attempt that could not start
	failed *host          // the instance whose exit failed the attempt
	grace  time.Duration
	killed bool // the grace period ran out and SIGKILL was sent
}

type supervisor struct {
	dir   string
	spec  launchSpec
	st    status
	hosts []*host
	byPID map[int]*host
	live  int
	term  chan os.Signal // a stop request
	chld  chan os.Signal // a child to reap
	end   *ending
	grace *time.Timer
}

func newSupervisor(dir string) (*supervisor, error) {
	// The inherited lock must stay with the supervisor alone: its release
	// tells the executor that the supervisor is gone.
	syscall.CloseOnExec(lockFD)
	s := &supervisor{dir: dir, byPID: map[int]*host{}, term: make(chan os.Signal, 1), chld: make(chan os.Signal, 1)}
	if err := readJSON(filepath.Join(dir, launchFile), &s.spec); err != nil {
		return nil, fmt.Errorf("read launch spec: %w", err)
	}
	// Register before announcing our pid in state.json: the executor only
	// signals a pid it read there.
	signal.Notify(s.term, syscall.SIGTERM)
	signal.Notify(s.chld, syscall.SIGCHLD)
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return nil, fmt.Errorf("become subreaper: %w", errno)
	}
	s.st = status{Supervisor: os.Getpid(), BootID: bootID()}
	return s, nil
}

// run is the supervisor's life: 1) announce Starting, 2) spawn the
// instances unless a stop came first, 3) announce Running, 4) wait for all
// of them while handling stop requests, the timeout and the grace period,
// 5) clean up stragglers and record the outcome.
func (s *supervisor) run() error {
	if err := s.record(transition{State: executor.Starting}); err != nil {
		return err
	}
	if s.stopRequested() {
		return s.finish()
	}
	s.spawnAll()
	if s.end == nil {
		s.st.Hosts = s.hostProcs()
		if err := s.record(transition{State: executor.Running}); err != nil {
			s.beginEnd(&ending{state: executor.Failed, reason: "CannotStart: " + err.Error()})
		}
	}
	s.wait()
	s.drain()
	return s.finish()
}

// stopRequested handles a stop that arrived before anything was spawned.
func (s *supervisor) stopRequested() bool {
	req, ok := s.readStop()
	if ok {
		s.end = &ending{state: executor.Stopped, reason: req.Reason, grace: req.Grace}
	}
	return ok
}

// readStop reads the stop request; ok is false when there is none. A
// request that cannot be read, or a SIGTERM without one, stops with the
// default grace period.
func (s *supervisor) readStop() (req stopRequest, ok bool) {
	err := readJSON(filepath.Join(s.dir, stopFile), &req)
	if err == nil && req.Reason != "" {
		return req, true
	}
	return stopRequest{Reason: "Stopped", Grace: s.spec.Grace}, !errors.Is(err, fs.ErrNotExist)
}

func (s *supervisor) spawnAll() {
	for _, hs := range s.spec.Hosts {
		pid, err := spawn(hs)
		if err != nil {
			s.beginEnd(&ending{state: executor.Failed, reason: "CannotStart: " + hs.Name + ": " + err.Error()})
			break
		}
		h := &host{spec: hs, pid: pid}
		s.hosts = append(s.hosts, h)
		s.byPID[pid] = h
		s.live++
	}
}

// spawn starts one instance in a process group of its own, so that a signal
// reaches everything it started. Pdeathsig kills it if the supervisor dies,
// which makes the attempt Lost rather than an unsupervised run.
// NB: syscall.ForkExec, not os.StartProcess, whose first use forks an
// extra process to probe for pidfd support; process creation is the
// dominant cost of an attempt.
func spawn(hs hostSpec) (int, error) {
	for _, d := range append([]string{filepath.Dir(hs.Stdout)}, hs.Mkdirs...) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	var files [3]*os.File
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	var err error
	if files[0], err = os.Open(os.DevNull); err != nil {
		return 0, err
	}
	for i, path := range []string{hs.Stdout, hs.Stderr} {
		if files[i+1], err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return 0, err
		}
	}
	pid, err := syscall.ForkExec(hs.Path, hs.Args, &syscall.ProcAttr{
		Dir:   hs.Dir,
		Env:   hs.Env,
		Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: hs.Path, Err: err}
	}
	return pid, nil
}

// reap collects the children that have exited, instances and orphaned
// descendants alike (the supervisor is their subreaper). none reports that
// no child is left at all.
func (s *supervisor) reap() (none bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return true
		case pid == 0:
			return false
		}
		s.onExit(pid, ws)
	}
}

func (s *supervisor) hostProcs() []hostProc {
	ps := make([]hostProc, len(s.hosts))
	for i, h := range s.hosts {
		ps[i] = hostProc{Name: h.spec.Name, PID: h.pid}
	}
	return ps
}

// wait runs until every instance has exited.
func (s *supervisor) wait() {
	var timeout <-chan time.Time
	if s.spec.Timeout > 0 {
		t := time.NewTimer(s.spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	for s.live > 0 {
		if s.reap() || s.live == 0 {
			return
		}
		var graceC <-chan time.Time
		if s.grace != nil {
			graceC = s.grace.C
		}
		select {
		case <-s.chld:
		case <-s.term:
			req, _ := s.readStop()
			s.beginEnd(&ending{state: executor.Stopped, reason: req.Reason, grace: req.Grace})
		case <-timeout:
			s.beginEnd(&ending{state: executor.Stopped, reason: "Attempt duration exceeded", grace: s.spec.Grace})
		case <-graceC:
			s.end.killed = true
			s.signalLive(syscall.SIGKILL)
		}
	}
}

func (s *supervisor) onExit(pid int, ws syscall.WaitStatus) {
	h := s.byPID[pid]
	if h == nil || h.done {
		return // an orphaned descendant
	}
	h.done, h.ws = true, ws
	s.live--
	// The instance is over: what it left behind in its group goes too, as
	// when a container exits.
	syscall.Kill(-h.pid, syscall.SIGKILL)
	if s.end == nil && exitCode(ws) != 0 {
		s.beginEnd(&ending{state: executor.Failed, failed: h, grace: s.spec.Grace})
	}
}

// beginEnd records the first reason to end and asks the live instances to
// exit; later reasons do not change the outcome.
func (s *supervisor) beginEnd(e *ending) {
	if s.end != nil {
		return
	}
	s.end = e
	if e.grace <= 0 {
		e.killed = s.live > 0
		s.signalLive(syscall.SIGKILL)
		return
	}
	s.signalLive(syscall.SIGTERM)
	s.grace = time.NewTimer(e.grace)
}

func (s *supervisor) signalLive(sig syscall.Signal) {
	for _, h := range s.hosts {
		if !h.done {
			syscall.Kill(-h.pid, sig)
		}
	}
}

// drain kills and reaps whatever is left: processes of the instances'
// groups and descendants that left them (setsid daemons), so that the
// final state means nothing of the attempt runs any more.
func (s *supervisor) drain() {
	if s.grace != nil {
		s.grace.Stop()
	}
	for _, h := range s.hosts {
		syscall.Kill(-h.pid, syscall.SIGKILL)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !s.reap() {
		select {
		case <-s.chld:
		case <-tick.C:
			killChildren(os.Getpid())
		}
	}
}

func killChildren(parent int) {
	eachProc(func(pid int, ps procStat) {
		if ps.PPID == parent {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// finish records the outcome.
func (s *supervisor) finish() error {
	return s.record(s.outcome())
}

func (s *supervisor) outcome() transition {
	code := 0
	for _, h := range s.hosts {
		if c := exitCode(h.ws); h.done && c != 0 && code == 0 {
			code = c
		}
	}
	e := s.end
	switch {
	case e == nil:
		return transition{State: executor.Succeeded}
	case e.failed != nil:
		return transition{State: executor.Failed, Reason: s.failReason(e.failed), ExitCode: exitCode(e.failed.ws)}
	case e.killed && e.state == executor.Stopped:
		return transition{State: e.state, Reason: e.reason + ": killed with SIGKILL after " + seconds(e.grace) + " grace period", ExitCode: code}
	default:
		return transition{State: e.state, Reason: e.reason, ExitCode: code}
	}
}

// failReason is "exit code N: <stderr tail>", naming the host when there
// are several and the signal when one ended the process.
func (s *supervisor) failReason(h *host) string {
	r := "exit code " + strconv.Itoa(exitCode(h.ws))
	if h.ws.Signaled() {
		r += " (" + h.ws.Signal().String() + ")"
	}
	if len(s.hosts) > 1 {
		r += " on " + h.spec.Name
	}
	if tail := stderrTail(h.spec.Stderr, 500); tail != "" {
		r += ": " + tail
	}
	return r
}

// record appends a transition to state.json.
func (s *supervisor) record(t transition) error {
	t.At = time.Now()
	s.st.History = append(s.st.History, t)
	return writeJSON(s.dir, stateFile, s.st)
}

// exitCode follows the shell: 128+n for a process killed by signal n.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
