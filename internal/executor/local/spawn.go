package local

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// procTable starts the supervisor's instance processes and routes their
// exits to their runs.
//
// NB: the supervisor reaps with wait4(-1), so it must never use os/exec,
// whose Wait would race with it.
type procTable struct {
	// mu is held from before a fork until its pid is in byPID, so that the
	// reaper, which looks a pid up under mu, never takes a fresh instance
	// for an orphan, and a scan for strays never takes a process between
	// fork and exec for one.
	mu      sync.Mutex
	byPID   map[int]*run
	forks   chan forkReq
	devNull *os.File // every instance's stdin
}

type forkReq struct {
	r      *run
	hs     hostSpec
	stdout *os.File
	stderr *os.File
	done   chan forkResult
}

type forkResult struct {
	pid int
	err error
}

// newProcTable starts the forking thread and the reaper.
func newProcTable() (*procTable, error) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	p := &procTable{byPID: map[int]*run{}, forks: make(chan forkReq), devNull: devNull}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go p.forkLoop()
	go p.reap(chld)
	return p, nil
}

// forkLoop forks every instance from one OS thread that lives as long as
// the process: Pdeathsig fires when the thread that forked a process ends,
// and must fire only when the supervisor dies.
func (p *procTable) forkLoop() {
	runtime.LockOSThread()
	for req := range p.forks {
		p.mu.Lock()
		// NB: syscall.ForkExec, not os.StartProcess, whose first use forks
		// an extra process to probe for pidfd support.
		sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if req.hs.MountNS {
			// The child's mounts are made private, so that the binds
			// mountScript makes reach nobody else.
			sys.Unshareflags = syscall.CLONE_NEWNS
		}
		pid, err := syscall.ForkExec(req.hs.Path, req.hs.Args, &syscall.ProcAttr{
			Dir:   req.hs.Dir,
			Env:   req.hs.Env,
			Files: []uintptr{p.devNull.Fd(), req.stdout.Fd(), req.stderr.Fd()},
			Sys:   sys,
		})
		if err == nil {
			p.byPID[pid] = req.r
		}
		p.mu.Unlock()
		req.done <- forkResult{pid, err}
	}
}

// spawn starts one instance in a process group of its own, so that a
// signal reaches everything it started. Pdeathsig kills it if the
// supervisor dies, which makes the attempt Lost rather than an
// unsupervised run.
func (p *procTable) spawn(r *run, hs hostSpec) (int, error) {
	for _, d := range append([]string{filepath.Dir(hs.Stdout)}, hs.Mkdirs...) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	req := forkReq{r: r, hs: hs, done: make(chan forkResult, 1)}
	var err error
	if req.stdout, err = os.OpenFile(hs.Stdout, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return 0, err
	}
	defer req.stdout.Close()
	if req.stderr, err = os.OpenFile(hs.Stderr, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return 0, err
	}
	defer req.stderr.Close()
	p.forks <- req
	res := <-req.done
	if res.err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: hs.Path, Err: res.err}
	}
	return res.pid, nil
}

// detached starts argv, with its output discarded, and leaves it: the
// reaper collects it with the others, as a child of no run.
func (p *procTable) detached(argv, env []string) error {
	req := forkReq{hs: hostSpec{Path: argv[0], Args: argv, Env: env, Dir: "/"}, stdout: p.devNull, stderr: p.devNull, done: make(chan forkResult, 1)}
	p.forks <- req
	return (<-req.done).err
}

// reap collects the children that have exited, instances and orphaned
// descendants alike (the supervisor is their subreaper), and hands each
// instance's exit to its run.
func (p *procTable) reap(chld <-chan os.Signal) {
	for range chld {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			p.mu.Lock()
			r := p.byPID[pid]
			delete(p.byPID, pid)
			p.mu.Unlock()
			if r != nil {
				r.exits <- procExit{pid, ws} // never blocks: a slot per instance
			}
		}
	}
}

// killStrays SIGKILLs the supervisor's children that are no instance and
// belong to attempt id or to no running attempt (by their
// TRAINING_JOB_NAME): descendants that left their instance's process group
// and were orphaned. It returns how many it signalled.
func (p *procTable) killStrays(id string, running func(string) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pid := range orphans() {
		if p.byPID[pid] != nil {
			continue
		}
		if ps, err := readProcStat(pid); err != nil || ps.State == 'Z' {
			continue
		}
		if runtimeDaemon(pid) {
			continue
		}
		if owner := attemptOfProcess(pid); owner == id || !running(owner) {
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// runtimeDaemons are the programs a container runtime leaves running
// beside a container: its monitor (conmon), which goes when its container
// is removed, and the network's name server, which serves every attempt's
// network. They are orphaned to the supervisor like a job's strays, but
// are the runtime's, not the job's.
var runtimeDaemons = map[string]bool{
	"conmon": true, "aardvark-dns": true, "dnsmasq": true, // rootful podman's, with netavark or CNI
	"catatonit": true, "slirp4netns": true, "pasta": true, "rootlessport": true, // rootless podman's
}

func runtimeDaemon(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && runtimeDaemons[filepath.Base(exe)]
}

// orphans lists the children this process adopted as a subreaper. The
// kernel gives an orphan to the first live thread of its subreaper, the
// main thread, which never ends in a Go program; the instances are the
// forking thread's children. Without /proc/<pid>/task/<tid>/children
// (CONFIG_PROC_CHILDREN) it lists every child.
func orphans() []int {
	self := os.Getpid()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(self) + "/children")
	if err != nil {
		var pids []int
		eachProc(func(pid int, ps procStat) {
			if ps.PPID == self {
				pids = append(pids, pid)
			}
		})
		return pids
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// attemptOfProcess reads the attempt a process belongs to from its environment:
// every instance gets TRAINING_JOB_NAME, the attempt ID, and passes it on.
func attemptOfProcess(pid int) string {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("TRAINING_JOB_NAME=")); ok {
			return string(v)
		}
	}
	return ""
}
