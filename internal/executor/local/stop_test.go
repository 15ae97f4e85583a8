package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Ensure Stop sends SIGTERM so that a job can checkpoint, and a new
// attempt of the same job resumes from the checkpoint.
func TestStopCheckpointResume(t *testing.T) {
	h := newHarness(t, Options{})
	j := sh(`ck="$SM_CHECKPOINT_DIR/ckpt"
if [ -f "$ck" ]; then echo "resumed from $(cat "$ck")"; exit 0; fi
trap 'echo step-7 > "$ck"; exit 0' TERM
echo ready
sleep 30 & wait`)
	h.start(attemptOf("a1", "job", j))
	h.await("a1", executor.Running)
	waitFile(t, filepath.Join(h.attemptDir("a1"), "logs", "algo-1.stdout"), "ready")
	h.stop("a1", 10*time.Second)
	if u := h.await("a1", executor.Stopped); u.Reason != "Stopped" {
		t.Errorf("reason = %q, want Stopped", u.Reason)
	}

	h.start(attemptOf("a2", "job", j))
	h.await("a2", executor.Succeeded)
	if got := strings.TrimSpace(h.log("a2", "algo-1", "stdout")); got != "resumed from step-7" {
		t.Errorf("second attempt printed %q", got)
	}
}

// Ensure a job that ignores SIGTERM is killed after the grace period, the
// reason says so, and SHARQ_STOP_GRACE_SECONDS overrides the caller's grace.
func TestStopKillsAfterGrace(t *testing.T) {
	h := newHarness(t, Options{})
	ignore := sh(`trap '' TERM; echo ready; sleep 30`)
	tests := map[string]struct {
		job        job
		grace      time.Duration
		wantReason string
	}{
		"CallerGrace":  {ignore, 300 * time.Millisecond, "Stopped: killed with SIGKILL after 0.3s grace period"},
		"PayloadGrace": {ignore.withEnv(graceEnv, "0.2"), time.Hour, "Stopped: killed with SIGKILL after 0.2s grace period"},
		"NoGrace":      {ignore, 0, "Stopped: killed with SIGKILL after 0s grace period"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h.start(attemptOf(name, name, tc.job))
			h.await(name, executor.Running)
			waitFile(t, filepath.Join(h.attemptDir(name), "logs", "algo-1.stdout"), "ready")
			pids := hostPIDs(h.status(name))
			begin := time.Now()
			h.stop(name, tc.grace)
			u := h.await(name, executor.Stopped)
			if u.Reason != tc.wantReason {
				t.Errorf("reason = %q, want %q", u.Reason, tc.wantReason)
			}
			if took := time.Since(begin); took < min(tc.grace, 200*time.Millisecond) {
				t.Errorf("stopped after %s, before the grace period", took)
			}
			assertGone(t, pids)
		})
	}
}

// Ensure the attempt timeout and the payload's MaxRuntimeInSeconds stop the
// attempt with "Attempt duration exceeded".
func TestTimeout(t *testing.T) {
	h := newHarness(t, Options{})
	a := attemptOf("attempt-timeout", "j1", sh("sleep 30"))
	a.Timeout = 300 * time.Millisecond
	h.start(a)
	j := sh("sleep 30")
	j.MaxRuntime = 1
	h.start(attemptOf("max-runtime", "j2", j))
	for _, id := range []string{"attempt-timeout", "max-runtime"} {
		u := h.await(id, executor.Stopped)
		if u.Reason != "Attempt duration exceeded" {
			t.Errorf("%s: reason = %q", id, u.Reason)
		}
		if ups := h.updates(id); u.At.Sub(ups[1].At) < 300*time.Millisecond {
			t.Errorf("%s: stopped %s after Running", id, u.At.Sub(ups[1].At))
		}
	}
}

// Ensure a stopped attempt that still waits never starts.
func TestStopWhileWaiting(t *testing.T) {
	h := newHarness(t, Options{GPUs: []int{0}})
	h.start(gpuAttempt("victim", "ml.g5.xlarge", 1))
	h.await("victim", executor.Running)
	h.start(gpuAttempt("head", "ml.g5.xlarge", 1)) // waits for the one GPU
	h.stop("head", time.Second)
	if u := h.await("head", executor.Stopped); u.Reason != "Stopped" {
		t.Errorf("reason = %q", u.Reason)
	}
	h.stop("victim", time.Second)
	h.await("victim", executor.Stopped)
	time.Sleep(100 * time.Millisecond) // real processes: a wrong start of head, once victim's GPU is free, is seen only by waiting
	if got := states(h.updates("head")); len(got) != 1 {
		t.Errorf("head updates = %v, want only STOPPED", got)
	}
}

func attemptState(t *testing.T, e *Executor, id string) executor.State {
	t.Helper()
	all, err := e.Attempts(t.Context())
	if err != nil {
		t.Fatalf("Attempts: %v", err)
	}
	for _, u := range all {
		if u.AttemptID == id {
			return u.State
		}
	}
	return ""
}

func readNanos(t *testing.T, dir, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read mark: %v", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("parse mark: %v", err)
	}
	return n
}

// Ensure a SIGTERM to the supervisor without a stop request (an operator's
// kill) stops the attempt like Stop does.
func TestSupervisorSIGTERM(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("a", "j", sh("sleep 30")))
	h.await("a", executor.Running)
	syscall.Kill(h.status("a").Supervisor, syscall.SIGTERM)
	if u := h.await("a", executor.Stopped); u.Reason != "Stopped" || u.ExitCode != 143 {
		t.Errorf("got exit %d, reason %q", u.ExitCode, u.Reason)
	}
}
