package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// With --supervisor, attempts are supervised by that program (here
// cmd/sharq-supervise) instead of the sharq binary, and run the same.
func TestLocalSupervisorFlag(t *testing.T) {
	t.Parallel()
	sup := filepath.Join(t.TempDir(), "sharq-supervise")
	build := exec.Command("go", "build", "-o", sup, "github.com/sharq-dev/sharq/cmd/sharq-supervise")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/sharq-supervise: %v\n%s", err, out)
	}
	s := startLocal(t, "", "--stop-grace", "5s", "--supervisor", sup)
	c := s.client()
	setUpWalkthrough(t, c, 3)
	release := filepath.Join(t.TempDir(), "release")
	job := s.submitLocal(t, c, localJob{name: "job", share: "QS1", priority: 1,
		argv: shell(`while [ ! -f "$RELEASE" ]; do sleep 0.1; done; echo released`), env: map[string]string{"RELEASE": release}})
	waitStatus(t, c, job, types.ServiceJobStatusRunning)
	if got, want := cmdline(s.supervisor(t)), sup+" __supervise "+filepath.Join(s.dataDir, "executor"); got != want {
		t.Errorf("supervisor command line %q, want %q", got, want)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, job, types.ServiceJobStatusSucceeded)
	d := describe(t, c, job)
	if out := s.attemptLog(t, attemptID(t, d.LatestAttempt.ServiceResourceId), "stdout"); out != "released\n" {
		t.Errorf("the job printed %q, want \"released\"", out)
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}

// supervisorPID reads the supervisor an attempt ran under from its
// state.json.
func (s *localServer) supervisorPID(t *testing.T, attempt string) int {
	t.Helper()
	var st struct {
		Supervisor int `json:"supervisor_pid"`
	}
	b, err := os.ReadFile(filepath.Join(s.attemptDir(attempt), "state.json"))
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || st.Supervisor == 0 {
		t.Fatalf("state.json of attempt %s names no supervisor (%v): %s", attempt, err, b)
	}
	return st.Supervisor
}

// kill -9 of the server leaves the supervisor, and the jobs under it,
// running: jobs that end while no server runs are found with their
// outcomes by the next server, which hands new jobs to the same
// supervisor.
func TestLocalSupervisorOutlivesServerKill(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	dir := t.TempDir()
	job := func(name, share, script string, priority int32) string {
		env := map[string]string{"RUNS": filepath.Join(dir, name+".runs"), "RELEASE": filepath.Join(dir, name+".release")}
		return s.submitLocal(t, c, localJob{name: name, share: share, priority: priority, argv: shell(script), env: env, retry: retryStrategy(1)})
	}
	// ok runs on QS1's instance, fails on the one QS1 borrows from QS2,
	// long on QS3's.
	jobs := map[string]string{
		"ok":    job("ok", "QS1", untilReleased, 2),
		"fails": job("fails", "QS1", untilReleased+"; echo broken >&2; exit 3", 1),
		"long":  job("long", "QS3", untilReleased, 1),
	}
	attempts := map[string]string{}
	for n, j := range jobs {
		d := waitStatus(t, c, j, types.ServiceJobStatusRunning)
		attempts[n] = attemptID(t, d.LatestAttempt.ServiceResourceId)
	}
	sup := s.supervisor(t)
	for n, a := range attempts {
		if pid := s.supervisorPID(t, a); pid != sup {
			t.Fatalf("job %s runs under supervisor %d, want the data dir's supervisor %d", n, pid, sup)
		}
	}

	s.kill()
	for _, n := range []string{"ok", "fails"} {
		if err := os.WriteFile(filepath.Join(dir, n+".release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if end := s.waitAttemptEnd(t, attempts[n], 30*time.Second); end.State != map[string]string{"ok": "SUCCEEDED", "fails": "FAILED"}[n] {
			t.Errorf("job %s ended %s while no server ran", n, end.State)
		}
	}
	if sups := supervisorsOf(s.dataDir); len(sups) != 1 || sups[0] != sup {
		t.Fatalf("supervisors after kill -9 of the server: %v, want %d still running", sups, sup)
	}

	s2 := s.restart(t, "--stop-grace", "5s")
	c = s2.client()
	waitStatus(t, c, jobs["ok"], types.ServiceJobStatusSucceeded)
	if f := waitStatus(t, c, jobs["fails"], types.ServiceJobStatusFailed); aws.ToString(f.StatusReason) != "exit code 3: broken" {
		t.Errorf("job fails: statusReason %q, want \"exit code 3: broken\"", aws.ToString(f.StatusReason))
	}
	if d := describe(t, c, jobs["long"]); d.Status != types.ServiceJobStatusRunning || len(d.Attempts) != 1 {
		t.Errorf("after the restart job long is %s with %d attempts, want still RUNNING its first attempt", d.Status, len(d.Attempts))
	}
	next := s2.submitLocal(t, c, localJob{name: "next", share: "QS1", priority: 1, argv: shell("true")})
	d := waitStatus(t, c, next, types.ServiceJobStatusSucceeded)
	if pid := s2.supervisorPID(t, attemptID(t, d.LatestAttempt.ServiceResourceId)); pid != sup {
		t.Errorf("a job submitted after the restart ran under supervisor %d, want the one that kept running, %d", pid, sup)
	}
	if err := os.WriteFile(filepath.Join(dir, "long.release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, jobs["long"], types.ServiceJobStatusSucceeded)
	for n := range jobs {
		if runs, err := os.ReadFile(filepath.Join(dir, n+".runs")); err != nil || string(runs) != "started\n" {
			t.Errorf("job %s's processes started %q times (%v), want exactly once", n, runs, err)
		}
	}
	s2.waitNoProcesses(t, 30*time.Second)
	s2.stop()
}

// kill -9 of the supervisor kills the jobs it ran (their processes die
// with it): their attempts end LOST with a reason that says so, and the
// jobs run again, under a new supervisor, without using up a retry.
func TestLocalSupervisorCrash(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	dir := t.TempDir()
	jobs := map[string]string{}
	for i, n := range []string{"a", "b"} {
		env := map[string]string{"RUNS": filepath.Join(dir, n+".runs"), "RELEASE": filepath.Join(dir, n+".release")}
		jobs[n] = s.submitLocal(t, c, localJob{name: n, share: "QS1", priority: int32(2 - i), argv: shell(untilReleased), env: env, retry: retryStrategy(1)})
	}
	for n, j := range jobs {
		waitStatus(t, c, j, types.ServiceJobStatusRunning)
		s.waitInstances(t, n, 1, 30*time.Second)
		// The instance's process exists, but its shell may not have counted
		// the run yet: the kill below must end a run that did.
		testwait.Until(t, 30*time.Second, func() error {
			if runs, _ := os.ReadFile(filepath.Join(dir, n+".runs")); string(runs) != "started\n" {
				return notYet("job %s's first run has not counted itself: %q", n, runs)
			}
			return nil
		})
	}
	sup := s.supervisor(t)
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	const lost = "attempt processes vanished (supervisor exited: signal: killed)"
	for n, j := range jobs {
		testwait.Until(t, 30*time.Second, func() error {
			d := describe(t, c, j)
			if len(d.Attempts) < 2 || d.Status != types.ServiceJobStatusRunning {
				return notYet("job %s is %s with %d attempts, want RUNNING its second", n, d.Status, len(d.Attempts))
			}
			if r := aws.ToString(d.Attempts[0].StatusReason); r != lost {
				return fmt.Errorf("job %s's first attempt ended with %q, want %q", n, r, lost)
			}
			return nil
		})
		s.waitInstances(t, n, 1, 30*time.Second)
	}
	if sup2 := s.supervisor(t); sup2 == sup {
		t.Errorf("the jobs run again under pid %d, the killed supervisor's", sup2)
	}
	for n, j := range jobs {
		if err := os.WriteFile(filepath.Join(dir, n+".release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		d := waitStatus(t, c, j, types.ServiceJobStatusSucceeded)
		if len(d.Attempts) != 2 {
			t.Errorf("job %s SUCCEEDED after %d attempts, want 2", n, len(d.Attempts))
		}
		if runs, err := os.ReadFile(filepath.Join(dir, n+".runs")); err != nil || string(runs) != "started\nstarted\n" {
			t.Errorf("job %s's processes started %q (%v), want twice", n, runs, err)
		}
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}
