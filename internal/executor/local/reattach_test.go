package local

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure a running attempt survives the executor: a new executor on the
// same data dir sees it Running and can stop it.
func TestReattachRunning(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("a", "j", sh(`trap 'exit 0' TERM; sleep 30 & wait`)))
	h.await("a", executor.Running)
	h.reopen()
	if st := attemptState(t, h.e, "a"); st != executor.Running {
		t.Fatalf("after reopen: %s, want RUNNING", st)
	}
	h.stop("a", 10*time.Second)
	if u := h.await("a", executor.Stopped); u.Reason != "Stopped" {
		t.Errorf("reason = %q", u.Reason)
	}
}

// Ensure an attempt that ended while no executor ran is reported by
// Attempts, and one that was waiting is queued again.
func TestReattachEndedAndQueued(t *testing.T) {
	h := newHarness(t, Options{GPUs: []int{0}})
	h.start(attemptOf("short", "j1", sh("sleep 0.3; exit 4")))
	h.start(gpuAttempt("long", "ml.g5.xlarge", 1))
	h.await("long", executor.Running)
	waiting := attemptOf("waiting", "j3", sh("true"))
	waiting.Instances = []executor.Instances{{Type: "ml.g5.xlarge", Count: 1}}
	h.start(waiting) // waits for long's GPU
	h.await("short", executor.Running)
	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}
	testwait.True(t, waitTimeout, "short to end", func() bool { st := h.status("short"); return st.ended() })

	h.open()
	all, err := h.e.Attempts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]executor.Update{}
	for _, u := range all {
		got[u.AttemptID] = u
	}
	if u := got["short"]; u.State != executor.Failed || u.ExitCode != 4 || u.Reason != "exit code 4" {
		t.Errorf("short: %+v", u)
	}
	if got["long"].State != executor.Running || got["waiting"].State != Scheduled {
		t.Errorf("long %s, waiting %s", got["long"].State, got["waiting"].State)
	}
	h.stop("long", time.Second)
	h.await("waiting", executor.Succeeded)
}

// Ensure a supervisor killed with its processes makes the attempt Lost,
// whether the executor watched or was away.
func TestLost(t *testing.T) {
	for _, away := range []bool{false, true} {
		name := map[bool]string{false: "Watched", true: "Away"}[away]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{})
			h.start(attemptOf("a", "j", sh("sleep 30")))
			h.await("a", executor.Running)
			if away {
				h.e.Close()
			}
			st := h.status("a")
			syscall.Kill(st.Supervisor, syscall.SIGKILL)
			syscall.Kill(-st.Hosts[0].PID, syscall.SIGKILL)
			var u executor.Update
			if away {
				waitUnlocked(t, h.attemptDir("a"))
				h.open()
				all, _ := h.e.Attempts(t.Context())
				u = all[0]
			} else {
				u = h.await("a", executor.Lost)
			}
			if u.State != executor.Lost || !strings.HasPrefix(u.Reason, "attempt processes vanished") {
				t.Errorf("got %s %q", u.State, u.Reason)
			}
		})
	}
}

// Ensure a supervisor killed alone takes its instances with it, so nothing
// runs unsupervised.
func TestLostSupervisorOnly(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("a", "j", sh("sleep 30 & sleep 30 & wait")))
	h.await("a", executor.Running)
	st := h.status("a")
	syscall.Kill(st.Supervisor, syscall.SIGKILL)
	u := h.await("a", executor.Lost)
	if u.Reason != "attempt processes vanished (supervisor exited: signal: killed)" {
		t.Errorf("reason = %q", u.Reason)
	}
	assertGone(t, hostPIDs(st))
}

// Ensure an attempt whose state comes from before a reboot is Lost with a
// reason that says so.
func TestLostAfterReboot(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("a", "j", sh("sleep 30")))
	h.await("a", executor.Running)
	h.e.Close()
	st := h.status("a")
	syscall.Kill(st.Supervisor, syscall.SIGKILL)
	syscall.Kill(-st.Hosts[0].PID, syscall.SIGKILL)
	waitUnlocked(t, h.attemptDir("a"))
	st.BootID = "another-boot"
	if err := writeJSON(h.attemptDir("a"), stateFile, st); err != nil {
		t.Fatal(err)
	}
	h.open()
	all, _ := h.e.Attempts(t.Context())
	if u := all[0]; u.State != executor.Lost || u.Reason != "attempt processes vanished (host restarted)" {
		t.Errorf("got %s %q", u.State, u.Reason)
	}
}

func waitUnlocked(t *testing.T, dir string) {
	t.Helper()
	testwait.Until(t, waitTimeout, func() error {
		held, err := lockHeld(dir)
		if err != nil {
			t.Fatal(err)
		}
		if held {
			return errors.New("supervisor lock still held")
		}
		return nil
	})
}

// Ensure ended attempts past their retention are removed on restart, and
// others are kept.
func TestRetention(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("old", "j1", sh("true")))
	h.await("old", executor.Succeeded)
	time.Sleep(50 * time.Millisecond) // past the 40 ms retention below, on the wall clock the files are stamped with
	h.start(attemptOf("running", "j2", sh("sleep 30")))
	h.await("running", executor.Running)
	h.opts.Retention = 40 * time.Millisecond
	h.reopen()
	if st := attemptState(t, h.e, "old"); st != "" {
		t.Errorf("old attempt kept: %s", st)
	}
	if _, ok := h.e.logPath("old"); ok {
		t.Error("old attempt still has logs")
	}
	h.stop("running", time.Second)
	h.await("running", executor.Stopped)
}
