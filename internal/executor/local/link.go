package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Files of the supervisor in the executor's data dir.
const (
	supervisorSock = "supervisor.sock"
	supervisorLock = "supervisor.lock" // held by the live supervisor
	supervisorLog  = "supervisor.log"
)

// connectTimeout bounds how long the executor tries to reach or start a
// supervisor, e.g. while an idle one exits and releases its lock.
const connectTimeout = 15 * time.Second

// errNoSupervisor says that no supervisor runs and none was to be started.
var errNoSupervisor = errors.New("no supervisor runs")

// errVersion says that the running supervisor, started by another release,
// speaks another protocol.
var errVersion = errors.New("supervisor protocol mismatch")

// link is the executor's connection to the supervisor of its data dir,
// which it starts when none runs.
type link struct {
	dir    string   // the executor's data dir
	cmd    []string // SupervisorCommand
	log    *slog.Logger
	onGone func() // a supervisor went away: look at the attempts

	addr  string   // the socket's address
	dirFD *os.File // keeps a long dir's /proc/self/fd path valid

	mu     sync.Mutex // held while connecting
	conn   *net.UnixConn
	pid    int // the connected supervisor's
	closed bool

	startedMu sync.Mutex
	started   map[int]*startedSupervisor // supervisors this process started, by pid
}

// startedSupervisor is a supervisor this process started, so that its
// exit status is known once it is reaped.
type startedSupervisor struct {
	reaped chan struct{}
	err    error // set before reaped is closed
}

func newLink(dir string, cmd []string, log *slog.Logger, onGone func()) (*link, error) {
	l := &link{dir: dir, cmd: cmd, log: log, onGone: onGone, started: map[int]*startedSupervisor{}}
	l.addr = filepath.Join(dir, supervisorSock)
	// sun_path holds 107 bytes: a longer path is reached through a
	// descriptor of the directory.
	if len(l.addr) > 100 {
		f, err := os.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("open data dir: %w", err)
		}
		l.dirFD = f
		l.addr = "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) + "/" + supervisorSock
	}
	return l, nil
}

// launch hands the attempt to the supervisor, starting one if none runs;
// lock is the attempt's lock file, locked, which the supervisor keeps
// until the attempt's end is recorded.
func (l *link) launch(id string, lock *os.File) error {
	return l.send(message{Op: "launch", Attempt: id}, lock, true)
}

// stop asks the supervisor to read the attempt's stop request.
func (l *link) stop(id string) error {
	return l.send(message{Op: "stop", Attempt: id}, nil, false)
}

// send writes one message, connecting first if need be; a write that
// fails on a connection that went away is tried once more on a new one.
func (l *link) send(m message, file *os.File, start bool) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if file != nil {
		oob = syscall.UnixRights(int(file.Fd()))
	}
	for try := 0; ; try++ {
		c, err := l.connection(start)
		if err != nil {
			return err
		}
		if _, _, err = c.WriteMsgUnix(b, oob, nil); err == nil {
			return nil
		}
		l.drop(c)
		if try > 0 {
			return fmt.Errorf("send to supervisor: %w", err)
		}
	}
}

// connection returns the connection to the supervisor, connecting (and
// with start, starting a supervisor) if there is none.
func (l *link) connection(start bool) (*net.UnixConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.conn != nil {
		return l.conn, nil
	}
	deadline := time.Now().Add(connectTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		c, pid, err := l.dial()
		if err == nil {
			l.conn, l.pid = c, pid
			go l.watch(c)
			return c, nil
		}
		lastErr = err
		if errors.Is(err, errVersion) {
			return nil, err // until that supervisor is idle and exits
		}
		if !start {
			return nil, errNoSupervisor
		}
		started, err := l.startLocked()
		switch {
		case err != nil:
			return nil, err
		case started != nil:
			// It listens already: the connection waits in the backlog
			// until it greets.
			c, pid, err := l.dial()
			if err != nil {
				select {
				case <-started.reaped:
					err = started.err // what it said is in its log
				case <-time.After(time.Second):
				}
				return nil, fmt.Errorf("start supervisor: %w: %s", err, stderrTail(filepath.Join(l.dir, supervisorLog), 300))
			}
			l.conn, l.pid = c, pid
			go l.watch(c)
			return c, nil
		}
		// Another supervisor holds the lock: it is starting, or exiting
		// because it was idle.
		time.Sleep(10 * time.Millisecond)
	}
	return nil, fmt.Errorf("reach supervisor: %w", lastErr)
}

// dial connects and reads the supervisor's greeting.
func (l *link) dial() (*net.UnixConn, int, error) {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: l.addr, Net: "unixpacket"})
	if err != nil {
		return nil, 0, err
	}
	c.SetReadDeadline(time.Now().Add(connectTimeout))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	c.SetReadDeadline(time.Time{})
	var m message
	if err == nil {
		err = json.Unmarshal(buf[:n], &m)
	}
	if err == nil && (m.Op != "hello" || m.Version != protocolVersion) {
		err = fmt.Errorf("%w: supervisor %d speaks version %d, this server %d", errVersion, m.PID, m.Version, protocolVersion)
	}
	if err != nil {
		c.Close()
		return nil, 0, err
	}
	return c, m.PID, nil
}

// startLocked starts a supervisor unless one holds supervisor.lock, in
// which case it returns nil and no error. The executor takes the lock and
// binds the socket, and the supervisor inherits both: the supervisor is
// never seen without its lock, and it can be dialled at once.
func (l *link) startLocked() (*startedSupervisor, error) {
	lock, err := os.OpenFile(filepath.Join(l.dir, supervisorLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	ln, err := l.listen()
	if err != nil {
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	defer ln.Close()
	logf, err := os.OpenFile(filepath.Join(l.dir, supervisorLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(l.cmd[0], append(l.cmd[1:len(l.cmd):len(l.cmd)], l.dir)...)
	cmd.Dir = l.dir // not the server's directory, which may go away
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{lock, ln} // lockFD, listenerFD
	// A session of its own: signals to the server's process group (a
	// Ctrl-C, a service stop) do not reach it or the jobs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	s := &startedSupervisor{reaped: make(chan struct{})}
	l.startedMu.Lock()
	l.started[cmd.Process.Pid] = s
	l.startedMu.Unlock()
	l.log.Info("started supervisor", "pid", cmd.Process.Pid, "dir", l.dir)
	go func() {
		s.err = cmd.Wait()
		close(s.reaped)
		l.log.Info("supervisor exited", "pid", cmd.Process.Pid, "status", s.err)
		l.onGone()
	}()
	return s, nil
}

// listen binds a fresh supervisor.sock, reachable by this user only.
func (l *link) listen() (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), supervisorSock)
	path := filepath.Join(l.dir, supervisorSock)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, err
	}
	err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: l.addr})
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err == nil {
		err = syscall.Listen(fd, syscall.SOMAXCONN)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return f, nil
}

// watch waits for the supervisor to close the connection, which it does
// only by exiting, and has the attempts looked at.
func (l *link) watch(c *net.UnixConn) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	l.drop(c)
	if !closed {
		l.onGone()
	}
}

// drop forgets a connection that failed.
func (l *link) drop(c *net.UnixConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == c {
		l.conn, l.pid = nil, 0
	}
	c.Close()
}

// exitStatus is the exit status of supervisor pid when this process
// started it, waiting up to wait for it to be reaped; nil when unknown.
// NB: a supervisor's lock and connection are released while it exits,
// just before its status can be collected.
func (l *link) exitStatus(pid int, wait time.Duration) error {
	l.startedMu.Lock()
	s := l.started[pid]
	l.startedMu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-s.reaped:
		return s.err
	case <-time.After(wait):
		return nil
	}
}

// supervisorPID is the connected supervisor's pid, 0 when none is.
func (l *link) supervisorPID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pid
}

// close drops the connection; the supervisor and its attempts run on.
func (l *link) close() {
	l.mu.Lock()
	l.closed = true
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if l.dirFD != nil {
		l.dirFD.Close()
	}
}
