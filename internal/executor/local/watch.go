package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// check brings the executor's view of a launched attempt up to date with
// its state.json. dead says the supervisor is known to have let the
// attempt go (its lock is free), in which case an attempt without a
// recorded end is lost.
func (e *Executor) check(at *attempt, dead bool) {
	at.mu.Lock()
	defer at.mu.Unlock()
	if e.isClosed() {
		return // a new executor may own the attempt now
	}
	e.mu.Lock()
	ph := at.phase
	e.mu.Unlock()
	if ph != launched {
		return
	}
	st, err := readStatus(at.dir)
	if err != nil {
		e.log.Warn("read attempt state", "attempt", at.id, "err", err)
		if !dead {
			return
		}
	}
	reported := e.emitLocked(at, st)
	if st.ended() {
		if reported {
			e.finishLocked(at)
		}
		return
	}
	if dead {
		e.loseLocked(at, st, e.sup.exitStatus(st.Supervisor, 2*time.Second))
	}
}

// loseLocked ends an attempt whose supervisor let it go without recording
// an end, and kills what may be left of its processes.
func (e *Executor) loseLocked(at *attempt, st status, exitErr error) {
	t := e.lostTransition(st, exitErr)
	if st.BootID == e.bootID {
		if n := killSession(st.Supervisor); n > 0 {
			e.log.Warn("killed orphaned attempt processes", "attempt", at.id, "count", n)
		}
	}
	e.log.Warn("attempt lost", "attempt", at.id, "reason", t.Reason)
	e.endLocked(at, t)
}

// emitLocked sends the transitions not reported yet, in order, with the
// times they happened. An end whose outputs are still to be sent is held
// back, and the after phase started: it reports the end once they are
// sent. It tells whether the attempt's end is reported now.
func (e *Executor) emitLocked(at *attempt, st status) bool {
	n := len(st.History)
	held := awaitsOutputs(at.spec, st)
	if held {
		n--
	}
	for ; at.reported < n; at.reported++ {
		t := st.History[at.reported]
		e.out.Put(executor.Update{AttemptID: at.id, JobID: at.jobID, State: t.State, Reason: t.Reason, ExitCode: t.ExitCode, At: t.At})
	}
	if n > 0 {
		at.last = st.History[n-1]
	}
	if held && !at.finishing {
		e.mu.Lock()
		closed := e.closed
		if !closed {
			e.wg.Add(1) // under e.mu, not closed: Close waits for it
		}
		e.mu.Unlock()
		if !closed {
			at.finishing = true
			go func() {
				defer e.wg.Done()
				e.finishOutputs(at, at.spec)
			}()
		}
	}
	return st.ended() && !held
}

// finishLocked releases what an attempt whose end is reported held.
func (e *Executor) finishLocked(at *attempt) {
	e.mu.Lock()
	at.phase = ended
	for _, g := range at.gpus {
		delete(e.gpuOwner, g)
	}
	at.gpus = nil
	wd := at.wd
	at.wd = 0
	e.mu.Unlock()
	if wd != 0 {
		e.watch.remove(wd)
	}
	e.admit()
}

// watchLocked watches the attempt's directory. Without a watch the attempt
// still works, through the poll.
func (e *Executor) watchLocked(at *attempt) {
	wd, err := e.watch.add(at.dir, at.id)
	if err != nil {
		e.log.Warn("watch attempt", "attempt", at.id, "err", err)
		return
	}
	e.mu.Lock()
	at.wd = wd
	e.mu.Unlock()
}

func (e *Executor) onStateChange(id string) {
	if id == "" {
		for _, at := range e.launchedAttempts() {
			e.check(at, false)
		}
		return
	}
	e.mu.Lock()
	at := e.attempts[id]
	e.mu.Unlock()
	if at != nil {
		e.check(at, false)
	}
}

// poll is the safety net: it notices a supervisor that died, re-reads
// the state of attempts without a watch, and removes ended attempts past
// their retention.
func (e *Executor) poll() {
	tick := time.NewTicker(e.opts.PollInterval)
	defer tick.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-e.done:
			return
		case <-tick.C:
		}
		e.probeAll()
		if time.Since(lastSweep) > time.Hour {
			e.sweep()
			lastSweep = time.Now()
		}
	}
}

// probeAll probes every launched attempt; the link calls it when a
// supervisor went away.
func (e *Executor) probeAll() {
	for _, at := range e.launchedAttempts() {
		e.probe(at)
	}
}

func (e *Executor) launchedAttempts() []*attempt {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ats []*attempt
	for _, at := range e.attempts {
		if at.phase == launched {
			ats = append(ats, at)
		}
	}
	return ats
}

func (e *Executor) probe(at *attempt) {
	at.mu.Lock()
	handed := at.handed
	at.mu.Unlock()
	if !handed {
		return // being handed over
	}
	e.mu.Lock()
	watched := at.wd != 0
	e.mu.Unlock()
	held, err := lockHeld(at.dir)
	if err != nil {
		e.log.Warn("probe attempt", "attempt", at.id, "err", err)
		return
	}
	if !held || !watched {
		e.check(at, !held)
	}
}

// watcher reports renames onto state.json in watched attempt directories
// through one inotify instance.
type watcher struct {
	f    *os.File
	mu   sync.Mutex
	byWD map[int]string
}

func newWatcher() (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	// A non-blocking descriptor goes through the runtime poller, so Close
	// interrupts a pending Read.
	return &watcher{f: os.NewFile(uintptr(fd), "inotify"), byWD: map[int]string{}}, nil
}

func (w *watcher) add(dir, id string) (int, error) {
	var wd int
	var err error
	cerr := w.control(func(fd int) {
		wd, err = syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_TO|syscall.IN_ONLYDIR)
	})
	if err = errors.Join(cerr, err); err != nil {
		return 0, fmt.Errorf("watch %s: %w", dir, err)
	}
	w.mu.Lock()
	w.byWD[wd] = id
	w.mu.Unlock()
	return wd, nil
}

func (w *watcher) remove(wd int) {
	w.mu.Lock()
	delete(w.byWD, wd)
	w.mu.Unlock()
	w.control(func(fd int) { syscall.InotifyRmWatch(fd, uint32(wd)) })
}

func (w *watcher) control(fn func(fd int)) error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) })
}

func (w *watcher) close() error { return w.f.Close() }

// run calls fn with the attempt ID of every state.json change until the
// watcher is closed, and with "" when the kernel dropped events.
func (w *watcher) run(fn func(id string)) {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int(int32(binary.NativeEndian.Uint32(buf[off:])))
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+nameLen]
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			off += syscall.SizeofInotifyEvent + nameLen
			if mask&syscall.IN_Q_OVERFLOW != 0 {
				fn("") // events were lost: look at everything
				continue
			}
			if cstring(name) != stateFile {
				continue
			}
			w.mu.Lock()
			id, ok := w.byWD[wd]
			w.mu.Unlock()
			if ok {
				fn(id)
			}
		}
	}
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
