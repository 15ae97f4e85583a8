package local

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// untilFile runs until the file named by $RELEASE exists, then exits with
// $CODE (0 when unset).
const untilFile = `while [ ! -f "$RELEASE" ]; do sleep 0.05; done; exit ${CODE:-0}`

func released(j job, path string) job { return j.withEnv("RELEASE", path) }

func release(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// supervisorOf returns the pid recorded as the attempt's supervisor.
func (h *harness) supervisorOf(id string) int {
	h.tb.Helper()
	pid := h.status(id).Supervisor
	if pid <= 0 {
		h.tb.Fatalf("attempt %s records no supervisor", id)
	}
	return pid
}

func alive(pid int) bool {
	ps, err := readProcStat(pid)
	return err == nil && ps.State != 'Z'
}

// Ensure every attempt runs under one supervisor process, started with the
// data dir, and that it exits once no executor is connected and nothing
// runs.
func TestOneSupervisor(t *testing.T) {
	h := newHarness(t, Options{})
	rel := filepath.Join(t.TempDir(), "release")
	for i := range 3 {
		h.start(attemptOf("a"+strconv.Itoa(i), "j"+strconv.Itoa(i), released(sh(untilFile), rel)))
	}
	for i := range 3 {
		h.await("a"+strconv.Itoa(i), executor.Running)
	}
	pid := h.supervisorOf("a0")
	for i := 1; i < 3; i++ {
		if got := h.supervisorOf("a" + strconv.Itoa(i)); got != pid {
			t.Fatalf("attempt a%d runs under supervisor %d, a0 under %d: want one supervisor", i, got, pid)
		}
	}
	if want := SupervisorArg + " " + h.dir; !strings.HasSuffix(cmdline(pid), want) {
		t.Errorf("supervisor command line %q, want it to end with %q", cmdline(pid), want)
	}
	if got := h.e.sup.supervisorPID(); got != pid {
		t.Errorf("the executor is connected to supervisor %d, want %d", got, pid)
	}
	release(t, rel)
	for i := range 3 {
		h.await("a"+strconv.Itoa(i), executor.Succeeded)
	}
	if !alive(pid) {
		t.Error("the supervisor exited while the executor was connected")
	}
	h.e.Close()
	h.waitSupervisorsReaped()
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// Ensure the supervisor outlives its executor: attempts run on, one that
// ends meanwhile is found ended by the next executor, which hands new
// attempts to the same supervisor.
func TestSupervisorOutlivesExecutor(t *testing.T) {
	h := newHarness(t, Options{})
	dir := t.TempDir()
	h.start(attemptOf("long", "j1", released(sh(untilFile), filepath.Join(dir, "long"))))
	h.start(attemptOf("short", "j2", released(sh(untilFile), filepath.Join(dir, "short")).withEnv("CODE", "3")))
	h.await("long", executor.Running)
	h.await("short", executor.Running)
	pid := h.supervisorOf("long")
	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}

	release(t, filepath.Join(dir, "short"))
	testwait.True(t, waitTimeout, "short to end while no executor ran", func() bool { st := h.status("short"); return st.ended() })
	h.open()
	got := map[string]executor.Update{}
	all, _ := h.e.Attempts(t.Context())
	for _, u := range all {
		got[u.AttemptID] = u
	}
	if u := got["short"]; u.State != executor.Failed || u.ExitCode != 3 {
		t.Errorf("short after reopen: %s exit %d, want FAILED exit 3", u.State, u.ExitCode)
	}
	if u := got["long"]; u.State != executor.Running {
		t.Errorf("long after reopen: %s, want RUNNING", u.State)
	}
	h.start(attemptOf("new", "j3", sh("true")))
	h.await("new", executor.Succeeded)
	if got := h.supervisorOf("new"); got != pid {
		t.Errorf("new attempt ran under supervisor %d, want the running one, %d", got, pid)
	}
	release(t, filepath.Join(dir, "long"))
	h.await("long", executor.Succeeded)
}

// Ensure a supervisor that dies makes every attempt it ran Lost, with
// their processes gone, and the next attempt starts a new supervisor.
func TestSupervisorCrash(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("a", "j1", sh("sleep 30")))
	h.start(attemptOf("b", "j2", sh("sleep 30 & sleep 30 & wait")))
	h.await("a", executor.Running)
	h.await("b", executor.Running)
	pid := h.supervisorOf("a")
	groups := append(hostPIDs(h.status("a")), hostPIDs(h.status("b"))...)
	syscall.Kill(pid, syscall.SIGKILL)
	for _, id := range []string{"a", "b"} {
		u := h.await(id, executor.Lost)
		if u.Reason != "attempt processes vanished (supervisor exited: signal: killed)" {
			t.Errorf("%s: reason %q", id, u.Reason)
		}
	}
	assertGone(t, groups)

	h.start(attemptOf("c", "j3", sh("true")))
	h.await("c", executor.Succeeded)
	if got := h.supervisorOf("c"); got == pid {
		t.Errorf("c ran under the killed supervisor's pid %d", got)
	}
}

// Ensure descendants that leave their instance's process group (setsid)
// and are orphaned to the supervisor are killed when their attempt ends,
// with those that carry no attempt, and not while their attempt runs.
func TestStrays(t *testing.T) {
	h := newHarness(t, Options{})
	dir := t.TempDir()
	// The subshell exits at once: its setsid child is orphaned.
	b := sh(`(setsid sleep 30 & echo $! > "$PIDS/b") ; echo ready; sleep 30 & wait`).withEnv("PIDS", dir)
	h.start(attemptOf("b", "jb", b))
	h.await("b", executor.Running)
	bStray := readPID(t, filepath.Join(dir, "b"))

	a := sh(`setsid sleep 30 & echo $! > "$PIDS/a"
env -u TRAINING_JOB_NAME setsid sleep 30 & echo $! > "$PIDS/unmarked"
sleep 0.2`).withEnv("PIDS", dir)
	h.start(attemptOf("a", "ja", a))
	aStray, unmarked := readPID(t, filepath.Join(dir, "a")), readPID(t, filepath.Join(dir, "unmarked"))
	h.await("a", executor.Succeeded)
	sup := h.supervisorOf("a")
	for name, pid := range map[string]int{"a's stray": aStray, "the unmarked stray": unmarked} {
		if alive(pid) {
			t.Errorf("%s (%d) runs after its attempt ended", name, pid)
		}
	}
	ps, err := readProcStat(bStray)
	if err != nil || ps.State == 'Z' {
		t.Fatalf("b's stray (%d) was killed while b runs", bStray)
	}
	if ps.PPID != sup {
		t.Fatalf("b's stray has parent %d, want the supervisor %d that adopted it", ps.PPID, sup)
	}
	h.stop("b", time.Second)
	h.await("b", executor.Stopped)
	if alive(bStray) {
		t.Errorf("b's stray (%d) runs after b ended", bStray)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	s := waitFile(t, path, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// Ensure a data dir too long for a socket address still works.
func TestLongDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{DataDir: dir})
	h.start(attemptOf("a", "j", sh("echo hi")))
	h.await("a", executor.Succeeded)
	if got := h.log("a", "algo-1", "stdout"); got != "hi\n" {
		t.Errorf("stdout %q", got)
	}
}

// Ensure a supervisor that cannot start fails the attempt with a reason.
func TestSupervisorCannotStart(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	tests := map[string]struct {
		cmd  []string
		want string
	}{
		"Exits":         {[]string{"/bin/sh", "-c", "echo broken >&2; exit 1", "sh"}, "CannotStart: start supervisor: exit status 1: broken"},
		"NotExecutable": {[]string{notExec}, "CannotStart: start supervisor: fork/exec " + notExec + ": permission denied"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{SupervisorCommand: tc.cmd})
			h.start(attemptOf("a", "j", sh("true")))
			u := h.await("a", executor.Failed)
			if !strings.HasPrefix(u.Reason, tc.want) {
				t.Errorf("reason %q, want prefix %q", u.Reason, tc.want)
			}
		})
	}
}

// Ensure executors of several servers on one data dir share one
// supervisor, however their first launches race.
func TestExecutorsShareSupervisor(t *testing.T) {
	h1 := newHarness(t, Options{})
	h2 := newHarness(t, Options{DataDir: h1.dir})
	// Cleanups run last first: h2's checks that nothing is left, which
	// needs h1 closed too.
	t.Cleanup(func() { h1.e.Close() })
	var wg sync.WaitGroup
	for i, h := range []*harness{h1, h2} {
		wg.Go(func() {
			for k := range 5 {
				h.start(attemptOf(fmt.Sprintf("h%d-%d", i, k), "j", sh("true")))
			}
		})
	}
	wg.Wait()
	pids := map[int][]string{}
	for i, h := range []*harness{h1, h2} {
		for k := range 5 {
			id := fmt.Sprintf("h%d-%d", i, k)
			h.await(id, executor.Succeeded)
			pids[h.supervisorOf(id)] = append(pids[h.supervisorOf(id)], id)
		}
	}
	if len(pids) != 1 {
		t.Errorf("attempts ran under %d supervisors, want 1: %v", len(pids), pids)
	}
}

// attemptSupervisorArg makes the test binary act as a supervisor of one
// attempt, as an older sharq started: it holds the attempt's lock
// (inherited as fd 3), records Running with its pid, and on SIGTERM
// records the stop request's end.
const attemptSupervisorArg = "attempt-supervisor"

func attemptSupervisorMain(args []string) int {
	dir := args[0]
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	now := time.Now()
	st := status{Supervisor: os.Getpid(), BootID: bootID(), History: []transition{
		{State: executor.Starting, At: now}, {State: executor.Running, At: now}}}
	if err := writeJSON(dir, stateFile, st); err != nil {
		return 1
	}
	<-term
	var req stopRequest
	readJSON(filepath.Join(dir, stopFile), &req)
	st.History = append(st.History, transition{State: executor.Stopped, Reason: req.Reason, At: time.Now()})
	if err := writeJSON(dir, stateFile, st); err != nil {
		return 1
	}
	return 0
}

// Ensure an attempt that an older sharq runs under a supervisor of its own
// is adopted and stopped through that supervisor.
func TestStopAttemptSupervisor(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "attempts", "old")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := attemptOf("old", "j", sh("sleep 30"))
	if err := writeJSON(dir, attemptFile, record{Attempt: a, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(dir, launchFile, launchSpec{}); err != nil {
		t.Fatal(err)
	}
	lock, err := takeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], attemptSupervisorArg, dir)
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitFile(t, filepath.Join(dir, stateFile), string(executor.Running))

	h := newHarness(t, Options{DataDir: dataDir})
	if st := attemptState(t, h.e, "old"); st != executor.Running {
		t.Fatalf("adopted attempt is %s, want RUNNING", st)
	}
	h.stop("old", time.Second)
	if u := h.await("old", executor.Stopped); u.Reason != "Stopped" {
		t.Errorf("reason %q", u.Reason)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the attempt's supervisor: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the attempt's supervisor did not exit")
	}
}

// Ensure a supervisor of another protocol version, left running by another
// release, is neither used nor replaced while it runs: attempts fail with a
// reason that says why.
func TestSupervisorOtherVersion(t *testing.T) {
	dir := t.TempDir()
	lock, err := os.OpenFile(filepath.Join(dir, supervisorLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: filepath.Join(dir, supervisorSock), Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			b, _ := json.Marshal(message{Op: "hello", PID: 4242, Version: protocolVersion + 1})
			c.Write(b)
			defer c.Close()
		}
	}()
	h := newHarness(t, Options{DataDir: dir})
	h.start(attemptOf("a", "j", sh("true")))
	u := h.await("a", executor.Failed)
	want := fmt.Sprintf("CannotStart: supervisor protocol mismatch: supervisor 4242 speaks version %d, this server %d", protocolVersion+1, protocolVersion)
	if u.Reason != want {
		t.Errorf("reason %q, want %q", u.Reason, want)
	}
}
