package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/optml"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("local executor closed")

// phase is where an attempt is from the executor's point of view.
type phase int

const (
	queued   phase = iota // waiting for GPUs; nothing runs
	launched              // handed to the supervisor (or found running)
	ended                 // a terminal state is recorded
)

// attempt is the executor's view of one attempt.
//
// Lock order: attempt.mu before Executor.mu.
type attempt struct {
	id, jobID, dir string
	created        time.Time

	// mu serialises the attempt's changes, so that its updates go out in
	// the order they happened.
	mu       sync.Mutex
	plan     *plan          // while queued and staged
	spec     *launchSpec    // once handed over: what the after phase needs
	grace    *time.Duration // the payload's grace override
	handed   bool           // the supervisor has it: its lock shows the supervisor's life
	reported int            // transitions of state.json already sent as updates
	last     transition

	// finishing: the after phase sends its outputs; the end is
	// reported once it is done.
	finishing bool

	// Guarded by Executor.mu.
	phase       phase
	gpus        []int
	wd          int                // inotify watch, 0 when none
	cancelStage context.CancelFunc // while its data is staged
}

// Executor runs attempts as supervised local processes. It implements
// executor.Executor.
type Executor struct {
	opts   Options
	log    *slog.Logger
	root   string // <DataDir>/attempts
	bootID string
	out    *executor.Outbox
	watch  *watcher
	sup    *link
	done   chan struct{}
	wg     sync.WaitGroup
	// mountNS: instances see their trees at /opt/ml, each in a mount
	// namespace of its own.
	mountNS bool
	images  imagesSeen

	mu       sync.Mutex
	attempts map[string]*attempt
	queue    []*attempt // queued attempts in arrival order
	gpuOwner map[int]string
	loaded   bool // reattach is done: the GPUs in use are known
	closed   bool
}

var _ executor.Executor = (*Executor)(nil)

// New opens the executor on opts.DataDir and reattaches to the attempts
// found there (see the package doc).
func New(opts Options) (*Executor, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Executor{
		opts:     opts,
		log:      opts.Logger,
		root:     filepath.Join(opts.DataDir, "attempts"),
		bootID:   bootID(),
		out:      executor.NewOutbox(),
		done:     make(chan struct{}),
		attempts: map[string]*attempt{},
		gpuOwner: map[int]string{},
	}
	if err := os.MkdirAll(e.root, 0o755); err != nil {
		return nil, fmt.Errorf("open data dir: %w", err)
	}
	e.mountNS = e.canMountNS()
	if e.sup, err = newLink(opts.DataDir, opts.SupervisorCommand, e.log, e.probeAll); err != nil {
		return nil, err
	}
	if e.watch, err = newWatcher(); err != nil {
		e.sup.close()
		return nil, err
	}
	e.reattach()
	e.mu.Lock()
	e.loaded = true
	e.mu.Unlock()
	e.wg.Add(3)
	go func() { defer e.wg.Done(); e.out.Run(e.done) }()
	go func() { defer e.wg.Done(); e.watch.run(e.onStateChange) }()
	go func() { defer e.wg.Done(); e.poll() }()
	e.admit()
	return e, nil
}

// canMountNS tells whether instances can see their trees at /opt/ml:
// making a mount namespace and binding in it take root's privilege, and
// /opt/ml must exist as the mount point.
func (e *Executor) canMountNS() bool {
	if e.opts.NoMountNamespace {
		return false
	}
	if os.Geteuid() != 0 {
		e.log.Info("not root: jobs see their /opt/ml tree at its own path, which the SM_* variables give")
		return false
	}
	if err := os.MkdirAll(optml.Root, 0o755); err != nil {
		e.log.Warn("jobs see their /opt/ml tree at its own path, which the SM_* variables give", "err", err)
		return false
	}
	if err := probeMountNS(); err != nil {
		e.log.Warn("no mount namespace can be made here: jobs see their /opt/ml tree at its own path, which the SM_* variables give", "err", err)
		return false
	}
	return true
}

// probeMountNS does what an instance's start does, with an empty tree and
// true as the job: root may still lack the privilege (in a container, say).
func probeMountNS() error {
	tree, err := os.MkdirTemp("", "sharq-mount-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	lower := filepath.Join(tree, "lower")
	if err := os.Mkdir(lower, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(mountShell)
	cmd.Args = mountArgv(tree, truePath, []string{"true"}, []overlay{{Source: lower, Target: lower, Scratch: filepath.Join(tree, "scratch")}})
	// It dies with the server, and runs outside the server's directory,
	// so that a server killed while it probes leaves nothing behind.
	cmd.Dir = tree
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start records the attempt and queues it for admission; a payload that
// cannot run ends in Failed through Updates, not as an error.
func (e *Executor) Start(ctx context.Context, a executor.Attempt) error {
	if err := validID(a.ID); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	if _, ok := e.attempts[a.ID]; ok {
		e.mu.Unlock()
		return nil
	}
	at := &attempt{id: a.ID, jobID: a.JobID, dir: filepath.Join(e.root, a.ID), created: time.Now()}
	// NB: nobody else can hold the new attempt's lock yet; taking it here
	// keeps Stop and Attempts waiting until it is recorded.
	at.mu.Lock()
	defer at.mu.Unlock()
	e.attempts[a.ID] = at
	e.mu.Unlock()

	if err := e.persist(at, a); err != nil {
		e.mu.Lock()
		delete(e.attempts, a.ID)
		e.mu.Unlock()
		return err
	}
	e.enqueueLocked(at, a)
	e.admit()
	return nil
}

func validID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("attempt id %q cannot name a directory", id)
	}
	return nil
}

// persist makes the attempt survive a restart of the executor before Start
// returns.
func (e *Executor) persist(at *attempt, a executor.Attempt) error {
	if err := os.Mkdir(at.dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("start %s: %w", a.ID, err)
	}
	if err := writeJSON(at.dir, attemptFile, record{Attempt: a, Created: at.created}); err != nil {
		return fmt.Errorf("start %s: %w", a.ID, err)
	}
	return nil
}

// enqueueLocked prepares the attempt and queues it, or fails it when its
// payload cannot run. The caller holds at.mu.
func (e *Executor) enqueueLocked(at *attempt, a executor.Attempt) {
	p, err := e.prepare(a, at.dir)
	if err != nil {
		e.failLocked(at, err.Error())
		return
	}
	at.plan, at.grace = p, p.spec.GraceOverride
	e.mu.Lock()
	at.phase = queued
	e.queue = append(e.queue, at)
	e.mu.Unlock()
}

// failLocked ends an attempt that no supervisor has with a Failed state.
func (e *Executor) failLocked(at *attempt, reason string) {
	e.endLocked(at, transition{State: executor.Failed, Reason: reason})
}

// endLocked records a terminal transition for an attempt that no live
// supervisor has and reports it.
func (e *Executor) endLocked(at *attempt, t transition) {
	st, err := readStatus(at.dir)
	if err != nil {
		e.log.Warn("read attempt state", "attempt", at.id, "err", err)
	}
	t.At = time.Now()
	st.History = append(st.History, t)
	if err := writeJSON(at.dir, stateFile, st); err != nil {
		e.log.Error("record attempt end", "attempt", at.id, "err", err)
	}
	if e.emitLocked(at, st) {
		e.finishLocked(at)
	}
}

// Stop asks the attempt to end (see the package doc). Unknown and ended
// attempts are left alone.
func (e *Executor) Stop(ctx context.Context, attemptID string, grace time.Duration) error {
	e.mu.Lock()
	at := e.attempts[attemptID]
	e.mu.Unlock()
	if at == nil {
		return nil
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.grace != nil {
		grace = *at.grace
	}
	e.mu.Lock()
	ph := at.phase
	if ph == queued {
		e.queue = slices.DeleteFunc(e.queue, func(q *attempt) bool { return q == at })
	}
	e.mu.Unlock()
	switch ph {
	case queued:
		e.endLocked(at, transition{State: executor.Stopped, Reason: "Stopped"})
		return nil
	case launched:
		return e.requestStop(at, grace)
	}
	return nil
}

// requestStop writes the stop request, then tells the supervisor, which
// reads it. An attempt not handed over yet reads it when it is: launch
// waits for at.mu, which the caller holds.
func (e *Executor) requestStop(at *attempt, grace time.Duration) error {
	if err := writeJSON(at.dir, stopFile, stopRequest{Reason: "Stopped", Grace: grace}); err != nil {
		return fmt.Errorf("stop %s: %w", at.id, err)
	}
	if !at.handed {
		e.mu.Lock()
		cancel := at.cancelStage
		e.mu.Unlock()
		if cancel != nil {
			cancel() // its staging ends it
		}
		return nil
	}
	st, err := readStatus(at.dir)
	if err != nil {
		return fmt.Errorf("stop %s: %w", at.id, err)
	}
	if st.ended() {
		return nil
	}
	if held, err := lockHeld(at.dir); err != nil || !held {
		return err // the supervisor let it go: it ended, or is Lost
	}
	err = e.sup.stop(at.id)
	if errors.Is(err, errNoSupervisor) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("stop %s: %w", at.id, err)
	}
	if st.Supervisor != 0 && st.Supervisor != e.sup.supervisorPID() {
		return signalAttemptSupervisor(at, st.Supervisor)
	}
	return nil
}

// signalAttemptSupervisor stops an attempt that an older sharq started
// under a supervisor of its own, which a SIGTERM stops. Only one
// supervisor of the data dir lives at a time, so a live holder of the
// attempt's lock other than the connected supervisor is such a one.
func signalAttemptSupervisor(at *attempt, pid int) error {
	// Once that supervisor is gone its pid may be reused: signal only
	// while its lock shows it alive.
	if held, err := lockHeld(at.dir); err != nil || !held {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", at.id, err)
	}
	return nil
}

// Updates delivers state changes; it is closed by Close.
func (e *Executor) Updates() <-chan executor.Update { return e.out.Updates() }

// Attempts lists every attempt the executor knows with its current state,
// ended ones included (until Retention removes them), sorted by ID.
func (e *Executor) Attempts(ctx context.Context) ([]executor.Update, error) {
	e.mu.Lock()
	all := make([]*attempt, 0, len(e.attempts))
	for _, at := range e.attempts {
		all = append(all, at)
	}
	e.mu.Unlock()
	ups := make([]executor.Update, 0, len(all))
	for _, at := range all {
		at.mu.Lock()
		u := executor.Update{AttemptID: at.id, JobID: at.jobID, State: Scheduled, At: at.created}
		if at.last.State != "" {
			u.State, u.Reason, u.ExitCode, u.At = at.last.State, at.last.Reason, at.last.ExitCode, at.last.At
		}
		at.mu.Unlock()
		ups = append(ups, u)
	}
	slices.SortFunc(ups, func(a, b executor.Update) int { return strings.Compare(a.AttemptID, b.AttemptID) })
	return ups, nil
}

// logPath returns the directory holding the attempt's logs,
// <host>.stdout and <host>.stderr for hosts algo-1..algo-n. The files grow
// while the attempt runs and stay until Retention removes the attempt.
func (e *Executor) logPath(attemptID string) (dir string, ok bool) {
	e.mu.Lock()
	at := e.attempts[attemptID]
	e.mu.Unlock()
	if at == nil {
		return "", false
	}
	return filepath.Join(at.dir, logsDir), true
}

var _ executor.LogReader = (*Executor)(nil)

// Logs opens an instance's stdout or stderr file from offset (see
// executor.LogReader).
func (e *Executor) Logs(ctx context.Context, attemptID, host, stream string, offset int64) (io.ReadCloser, error) {
	dir, ok := e.logPath(attemptID)
	if !ok {
		return nil, executor.ErrNoLogs
	}
	if !hostName.MatchString(host) || (stream != "stdout" && stream != "stderr") {
		return nil, fmt.Errorf("no log %s.%s: hosts are algo-N, streams stdout or stderr", host, stream)
	}
	f, err := os.Open(filepath.Join(dir, host+"."+stream))
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(strings.NewReader("")), nil // not written yet
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hostName is an instance's name: algo-1 to algo-N.
var hostName = regexp.MustCompile(`^algo-[0-9]+$`)

// Close stops watching. The supervisor and the jobs keep running; a new
// executor on the same DataDir picks them up.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	close(e.done)
	e.sup.close()
	err := e.watch.close()
	e.wg.Wait()
	return err
}

func (e *Executor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}
