package local

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// SupervisorArg is the hidden first argument that makes the sharq binary run
// as the supervisor of a data dir (see SupervisorMain).
const SupervisorArg = "__supervise"

// The descriptors the executor hands a supervisor it starts: the locked
// supervisor.lock and the listening supervisor.sock.
const (
	lockFD     = 3
	listenerFD = 4
)

// prSetChildSubreaper makes orphaned descendants children of the caller.
const prSetChildSubreaper = 36

// protocolVersion is what the supervisor and the executor speak; a server
// refuses a supervisor of another version rather than misread it. 2: a
// host may be forked in a mount namespace (hostSpec.MountNS).
const protocolVersion = 2

// startIdle is how long a new supervisor waits for its first client before
// it exits, when the server that started it went away at once.
const startIdle = 10 * time.Second

// message is one packet on supervisor.sock. The supervisor says "hello" to
// every client; clients send "launch" (with the attempt's locked lock file
// attached) and "stop".
type message struct {
	Op      string `json:"op"`
	Attempt string `json:"attempt,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Version int    `json:"version,omitempty"`
}

// HiddenMain runs the hidden command of a program that serves as the
// supervisor, SupervisorArg; ok is false when args (os.Args less the
// program) do not name it.
func HiddenMain(args []string) (code int, ok bool) {
	if len(args) > 0 && args[0] == SupervisorArg {
		return SupervisorMain(args[1:]), true
	}
	return 0, false
}

// SupervisorMain runs the supervisor of the executor data dir args[0] and
// returns the process's exit code. The sharq binary calls it when started as
// "sharq __supervise DIR" by the executor, which hands it its lock and its
// listening socket (see the package doc). Attempts' outcomes are in their
// state.json, not in the exit code.
func SupervisorMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: sharq "+SupervisorArg+" DATA_DIR (started by sharq serve)")
		return 2
	}
	d, err := newDaemon(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "supervise %s: %v\n", args[0], err)
		return 1
	}
	d.serve()
	return 0
}

// daemon is the supervisor: one process per data dir that runs every
// attempt the executors hand it, and outlives them.
type daemon struct {
	root   string // <DataDir>/attempts
	pid    int
	bootID string
	log    *slog.Logger
	lock   *os.File // supervisor.lock, held for the process's life
	ln     *net.UnixListener
	procs  *procTable
	done   chan struct{} // closed when the supervisor may exit

	mu       sync.Mutex
	clients  int
	runs     map[string]*run
	stopping bool // SIGTERM: every attempt is being stopped
	exiting  bool
}

func newDaemon(dataDir string) (*daemon, error) {
	// Both descriptors stay with the supervisor alone: the lock's release
	// tells that it is gone, and no job may answer its clients.
	syscall.CloseOnExec(lockFD)
	syscall.CloseOnExec(listenerFD)
	lf := os.NewFile(listenerFD, "supervisor.sock")
	l, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return nil, fmt.Errorf("listener: %w", err)
	}
	ln, ok := l.(*net.UnixListener)
	if !ok {
		return nil, fmt.Errorf("listener: %T is not a unix socket", l)
	}
	ln.SetUnlinkOnClose(false)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return nil, fmt.Errorf("become subreaper: %w", errno)
	}
	// Caught and dropped, not ignored: an ignored signal would stay
	// ignored in the jobs.
	drop := make(chan os.Signal, 1)
	signal.Notify(drop, syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	go func() {
		for range drop {
		}
	}()
	procs, err := newProcTable()
	if err != nil {
		return nil, err
	}
	d := &daemon{
		root:   filepath.Join(dataDir, "attempts"),
		pid:    os.Getpid(),
		bootID: bootID(),
		log:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
		lock:   os.NewFile(lockFD, "supervisor.lock"),
		ln:     ln,
		procs:  procs,
		done:   make(chan struct{}),
		runs:   map[string]*run{},
	}
	return d, nil
}

// serve accepts clients and runs what they hand over until the
// supervisor is idle: no client connected and no attempt running. SIGTERM
// stops every attempt, as Stop does, and the supervisor exits once they
// have ended.
func (d *daemon) serve() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go d.accept()
	time.AfterFunc(startIdle, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.maybeExitLocked()
	})
	d.log.Info("supervising", "pid", d.pid, "dir", d.root)
	select {
	case <-d.done:
	case <-term:
		d.terminate()
		<-d.done
	}
	d.log.Info("supervisor exits", "pid", d.pid)
}

func (d *daemon) accept() {
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			return // closed: the supervisor exits
		}
		if !sameUser(c) {
			c.Close()
			continue
		}
		d.mu.Lock()
		if d.exiting {
			d.mu.Unlock()
			c.Close()
			return
		}
		d.clients++
		d.mu.Unlock()
		go d.serveClient(c)
	}
}

// sameUser tells whether the peer runs as this process's user; the
// socket's mode already keeps others out.
func sameUser(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	rc.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	return err == nil && int(cred.Uid) == os.Getuid()
}

// serveClient greets a client and handles its requests until it goes.
func (d *daemon) serveClient(c *net.UnixConn) {
	defer func() {
		c.Close()
		d.mu.Lock()
		d.clients--
		d.maybeExitLocked()
		d.mu.Unlock()
	}()
	hello, _ := json.Marshal(message{Op: "hello", PID: d.pid, Version: protocolVersion})
	if _, err := c.Write(hello); err != nil {
		return
	}
	buf := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		files := receivedFiles(oob[:oobn])
		var m message
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			d.log.Warn("bad request", "err", err)
			closeAll(files)
			continue
		}
		switch m.Op {
		case "launch":
			if len(files) != 1 {
				d.log.Warn("launch without its lock", "attempt", m.Attempt)
				closeAll(files)
				continue
			}
			d.launch(m.Attempt, files[0])
		case "stop":
			closeAll(files)
			d.stop(m.Attempt)
		default:
			closeAll(files)
			d.log.Warn("unknown request", "op", m.Op)
		}
	}
}

// receivedFiles returns the descriptors passed with a message (received
// close-on-exec).
func receivedFiles(oob []byte) []*os.File {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "lock"))
		}
	}
	return files
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// launch runs an attempt whose launch.json the executor wrote; lock is
// its lock file, locked, which the run holds until its end is recorded.
// A launch of an attempt already running is a repeat and is dropped.
func (d *daemon) launch(id string, lock *os.File) {
	if err := validID(id); err != nil {
		d.log.Warn("launch", "err", err)
		lock.Close()
		return
	}
	d.mu.Lock()
	if d.runs[id] != nil {
		d.mu.Unlock()
		lock.Close()
		return
	}
	r := newRun(d, id, lock)
	d.runs[id] = r
	if d.stopping {
		r.requestStop()
	}
	d.mu.Unlock()
	go func() {
		r.main()
		d.mu.Lock()
		delete(d.runs, id)
		d.maybeExitLocked()
		d.mu.Unlock()
	}()
}

// stop asks a running attempt to stop; its stop.json says how.
func (d *daemon) stop(id string) {
	d.mu.Lock()
	r := d.runs[id]
	d.mu.Unlock()
	if r != nil {
		r.requestStop()
	}
}

// terminate stops every attempt and lets the supervisor exit once they
// have ended, connected clients or not; attempts handed over meanwhile
// are stopped at once.
func (d *daemon) terminate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log.Info("SIGTERM: stopping every attempt", "attempts", len(d.runs))
	d.stopping = true
	d.ln.Close()
	for _, r := range d.runs {
		r.requestStop()
	}
	d.maybeExitLocked()
}

// maybeExitLocked ends the supervisor once nothing needs it.
func (d *daemon) maybeExitLocked() {
	if d.exiting || len(d.runs) > 0 || d.clients > 0 && !d.stopping {
		return
	}
	d.exiting = true
	d.ln.Close()
	close(d.done)
}

// alive tells whether an attempt runs here.
func (d *daemon) alive(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs[id] != nil
}
