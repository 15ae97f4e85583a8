package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

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

// procExit is an instance's exit, as the supervisor's reaper saw it.
type procExit struct {
	pid int
	ws  syscall.WaitStatus
}

// run is one attempt in the supervisor, from its launch to its recorded
// end.
type run struct {
	d     *daemon
	id    string
	dir   string
	lock  *os.File // the attempt's lock, released once its end is recorded
	spec  launchSpec
	st    status
	hosts []*host
	live  int
	exits chan procExit // from the reaper; one slot per instance
	term  chan struct{} // a stop request
	end   *ending
	grace *time.Timer
}

func newRun(d *daemon, id string, lock *os.File) *run {
	return &run{d: d, id: id, dir: filepath.Join(d.root, id), lock: lock, term: make(chan struct{}, 1)}
}

// requestStop wakes the run to read its stop request; it never blocks.
func (r *run) requestStop() {
	select {
	case r.term <- struct{}{}:
	default:
	}
}

// main is the attempt's life: 1) note Starting, 2) spawn the instances
// unless a stop came first, 3) record Starting and Running, 4) wait for
// all of them while handling stop requests, the timeout and the grace
// period, 5) clean up stragglers and record the outcome, 6) release the
// lock. Starting and Running go to state.json in one write: should the
// supervisor die in between, the instances die with it (Pdeathsig), and
// the attempt, which recorded nothing, is Lost (or, found so by a
// restarted executor, launched again).
func (r *run) main() {
	defer r.lock.Close()
	defer func() {
		// A bug here must not take the other attempts down with the
		// supervisor: this one ends unrecorded, which makes it Lost.
		if p := recover(); p != nil {
			r.signalLive(syscall.SIGKILL)
			r.d.log.Error("supervising attempt panicked", "attempt", r.id, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	r.st = status{Supervisor: r.d.pid, BootID: r.d.bootID}
	if err := readJSON(filepath.Join(r.dir, launchFile), &r.spec); err != nil {
		r.finishWith(transition{State: executor.Failed, Reason: "CannotStart: read launch spec: " + err.Error()})
		return
	}
	r.exits = make(chan procExit, len(r.spec.Hosts))
	r.note(transition{State: executor.Starting})
	if r.stopRequested() {
		r.finish()
		return
	}
	r.spawnAll()
	if r.end == nil {
		r.st.Hosts = r.hostProcs()
		if err := r.record(transition{State: executor.Running}); err != nil {
			r.beginEnd(&ending{state: executor.Failed, reason: "CannotStart: " + err.Error()})
		}
	}
	r.wait()
	r.drain()
	r.finish()
}

// stopRequested handles a stop that arrived before anything was spawned.
// NB: the executor writes stop.json before it sends a stop, and a stop
// that arrives before the run is registered (through another server's
// connection) is dropped: the run reads stop.json once registered.
func (r *run) stopRequested() bool {
	req, ok := r.readStop()
	if !ok {
		select {
		case <-r.term:
			ok = true // the supervisor is stopping everything
		default:
		}
	}
	if ok {
		r.end = &ending{state: executor.Stopped, reason: req.Reason, grace: req.Grace}
	}
	return ok
}

// readStop reads the stop request; ok is false when there is none. A
// request that cannot be read, or a stop without one (SIGTERM to the
// supervisor), stops with the default grace period.
func (r *run) readStop() (req stopRequest, ok bool) {
	err := readJSON(filepath.Join(r.dir, stopFile), &req)
	if err == nil && req.Reason != "" {
		return req, true
	}
	return stopRequest{Reason: "Stopped", Grace: r.spec.Grace}, !errors.Is(err, fs.ErrNotExist)
}

func (r *run) spawnAll() {
	for _, hs := range r.spec.Hosts {
		pid, err := r.d.procs.spawn(r, hs)
		if err != nil {
			r.beginEnd(&ending{state: executor.Failed, reason: "CannotStart: " + hs.Name + ": " + err.Error()})
			break
		}
		r.hosts = append(r.hosts, &host{spec: hs, pid: pid})
		r.live++
	}
}

func (r *run) hostProcs() []hostProc {
	ps := make([]hostProc, len(r.hosts))
	for i, h := range r.hosts {
		ps[i] = hostProc{Name: h.spec.Name, PID: h.pid}
	}
	return ps
}

// wait runs until every instance has exited.
func (r *run) wait() {
	var timeout <-chan time.Time
	if r.spec.Timeout > 0 {
		t := time.NewTimer(r.spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	for r.live > 0 {
		var graceC <-chan time.Time
		if r.grace != nil {
			graceC = r.grace.C
		}
		select {
		case ex := <-r.exits:
			r.onExit(ex.pid, ex.ws)
		case <-r.term:
			req, _ := r.readStop()
			r.beginEnd(&ending{state: executor.Stopped, reason: req.Reason, grace: req.Grace})
		case <-timeout:
			r.beginEnd(&ending{state: executor.Stopped, reason: "Attempt duration exceeded", grace: r.spec.Grace})
		case <-graceC:
			r.end.killed = true
			r.signalLive(syscall.SIGKILL)
		}
	}
}

func (r *run) onExit(pid int, ws syscall.WaitStatus) {
	var h *host
	for _, c := range r.hosts {
		if c.pid == pid && !c.done {
			h = c
		}
	}
	if h == nil {
		return
	}
	h.done, h.ws = true, ws
	r.live--
	// The instance is over: what it left behind in its group goes too, as
	// when a container exits.
	syscall.Kill(-h.pid, syscall.SIGKILL)
	if r.end == nil && exitCode(ws) != 0 {
		r.beginEnd(&ending{state: executor.Failed, failed: h, grace: r.spec.Grace})
	}
}

// beginEnd records the first reason to end and asks the live instances to
// exit; later reasons do not change the outcome.
func (r *run) beginEnd(e *ending) {
	if r.end != nil {
		return
	}
	r.end = e
	if e.grace <= 0 {
		e.killed = r.live > 0
		r.signalLive(syscall.SIGKILL)
		return
	}
	r.signalLive(syscall.SIGTERM)
	r.grace = time.NewTimer(e.grace)
}

func (r *run) signalLive(sig syscall.Signal) {
	for _, h := range r.hosts {
		switch {
		case h.done:
		case sig == syscall.SIGTERM && len(h.spec.Term) > 0:
			if err := r.d.procs.detached(h.spec.Term, h.spec.Env); err != nil {
				r.d.log.Warn("signal the host", "attempt", r.id, "host", h.spec.Name, "err", err)
			}
		default:
			syscall.Kill(-h.pid, sig)
		}
	}
}

// drain kills what is left of the attempt: processes of the instances'
// groups, and descendants that left them (setsid daemons) and were
// orphaned to the supervisor, so that the recorded end means nothing of
// the attempt runs any more.
func (r *run) drain() {
	if r.grace != nil {
		r.grace.Stop()
	}
	for _, h := range r.hosts {
		syscall.Kill(-h.pid, syscall.SIGKILL)
	}
	for r.d.procs.killStrays(r.id, r.d.alive) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
}

// finish records the outcome.
func (r *run) finish() {
	r.finishWith(r.outcome())
}

func (r *run) finishWith(t transition) {
	if err := r.record(t); err != nil {
		r.d.log.Error("record attempt end", "attempt", r.id, "err", err)
	}
}

func (r *run) outcome() transition {
	code := 0
	for _, h := range r.hosts {
		if c := exitCode(h.ws); h.done && c != 0 && code == 0 {
			code = c
		}
	}
	e := r.end
	switch {
	case e == nil:
		return transition{State: executor.Succeeded}
	case e.failed != nil:
		return transition{State: executor.Failed, Reason: r.failReason(e.failed), ExitCode: exitCode(e.failed.ws)}
	case e.killed && e.state == executor.Stopped:
		return transition{State: e.state, Reason: e.reason + ": killed with SIGKILL after " + seconds(e.grace) + " grace period", ExitCode: code}
	default:
		return transition{State: e.state, Reason: e.reason, ExitCode: code}
	}
}

// failReason is "exit code N: <stderr tail>", naming the host when there
// are several and the signal when one ended the process.
func (r *run) failReason(h *host) string {
	s := "exit code " + strconv.Itoa(exitCode(h.ws))
	if h.ws.Signaled() {
		s += " (" + h.ws.Signal().String() + ")"
	}
	if len(r.hosts) > 1 {
		s += " on " + h.spec.Name
	}
	if tail := stderrTail(h.spec.Stderr, 500); tail != "" {
		s += ": " + tail
	}
	return s
}

// note appends a transition to the history, to be written with the next.
func (r *run) note(t transition) {
	t.At = time.Now()
	r.st.History = append(r.st.History, t)
}

// record appends a transition to state.json.
func (r *run) record(t transition) error {
	r.note(t)
	return writeJSON(r.dir, stateFile, r.st)
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
