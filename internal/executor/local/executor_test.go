package local

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Ensure a job runs with its payload's environment and the toolkit
// variables, and reports Starting, Running, Succeeded with its logs kept.
func TestSuccess(t *testing.T) {
	h := newHarness(t, Options{})
	j := sh(`echo "host=$SM_CURRENT_HOST hosts=$SM_HOSTS lr=$SM_HP_LR hps=$SM_HPS train=$SM_CHANNEL_TRAIN gpus=$SM_NUM_GPUS foo=$FOO"
test -d "$SM_MODEL_DIR" && test -d "$SM_OUTPUT_DATA_DIR" && test -d "$SM_CHECKPOINT_DIR"`)
	j.HPs = map[string]any{"lr": "0.1", "epochs": 3}
	j.Channels = map[string]string{"train": "file:///data/train"}
	j = j.withEnv("FOO", "bar")
	h.start(attemptOf("a1", "j1", j))
	h.await("a1", executor.Succeeded)

	if diff := cmp.Diff([]executor.State{executor.Starting, executor.Running, executor.Succeeded}, states(h.updates("a1"))); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	want := `host=algo-1 hosts=["algo-1"] lr=0.1 hps={"epochs":"3","lr":"0.1"} train=` + h.treePath("a1", "algo-1", "input/data/train") + ` gpus=0 foo=bar`
	if got := strings.TrimSpace(h.log("a1", "algo-1", "stdout")); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	dir, ok := h.e.logPath("a1")
	if !ok || dir != filepath.Join(h.attemptDir("a1"), "logs") {
		t.Errorf("logPath = %q, %v", dir, ok)
	}
	if _, ok := h.e.logPath("nope"); ok {
		t.Error("logPath of an unknown attempt is ok")
	}
	for _, tc := range []struct {
		attempt, host string
		offset        int64
		want          string
		err           error
	}{
		{"a1", "algo-1", 0, want + "\n", nil},
		{"a1", "algo-1", 5, want[5:] + "\n", nil},
		{"a1", "algo-2", 0, "", nil}, // not written (yet)
		{"nope", "algo-1", 0, "", executor.ErrNoLogs},
	} {
		r, err := h.e.Logs(t.Context(), tc.attempt, tc.host, "stdout", tc.offset)
		if !errors.Is(err, tc.err) {
			t.Errorf("Logs(%s, %s, %d): %v, want %v", tc.attempt, tc.host, tc.offset, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != tc.want {
			t.Errorf("Logs(%s, %s, %d) read %q (%v), want %q", tc.attempt, tc.host, tc.offset, b, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "checkpoints", "j1")); err != nil {
		t.Errorf("default checkpoint dir: %v", err)
	}
}

// Ensure a failing job reports its exit code and the tail of its stderr.
func TestFailure(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("short", "j", sh(`echo one >&2; echo boom >&2; exit 3`)))
	h.start(attemptOf("long", "j2", sh(`for i in $(seq 300); do echo "line $i" >&2; done; exit 1`)))

	u := h.await("short", executor.Failed)
	if u.ExitCode != 3 || u.Reason != "exit code 3: one\nboom" {
		t.Errorf("short: exit %d, reason %q", u.ExitCode, u.Reason)
	}
	u = h.await("long", executor.Failed)
	if !strings.HasPrefix(u.Reason, "exit code 1: line ") || !strings.HasSuffix(u.Reason, "line 300") || len(u.Reason) > 520 {
		t.Errorf("long: reason (%d bytes) %q", len(u.Reason), u.Reason)
	}
}

// Ensure payloads that cannot run fail at once with a reason, without
// Starting.
func TestCannotStart(t *testing.T) {
	h := newHarness(t, Options{})
	plain := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644)
	tests := map[string]struct {
		payload []byte
		want    string
	}{
		"BadJSON":       {[]byte(`{"AlgorithmSpecification":`), "CannotStart: payload is not a valid CreateTrainingJob request"},
		"NoEntrypoint":  {[]byte(`{"AlgorithmSpecification":{"TrainingImage":"img"}}`), "CannotStart: AlgorithmSpecification.ContainerEntrypoint is required"},
		"NotFound":      {job{Entrypoint: []string{"no-such-command-xyz"}}.payload(), `CannotStart: executable "no-such-command-xyz" not found`},
		"PathNotFound":  {job{Entrypoint: []string{"/no/such/file"}}.payload(), `CannotStart: executable "/no/such/file" not found`},
		"NotExecutable": {job{Entrypoint: []string{plain}}.payload(), `CannotStart: executable "` + plain + `" not found`},
		"BadGrace":      {sh("true").withEnv(graceEnv, "soon").payload(), "CannotStart: SHARQ_STOP_GRACE_SECONDS"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h.start(executor.Attempt{ID: name, JobID: name, Payload: tc.payload})
			u := h.await(name, executor.Failed)
			if !strings.HasPrefix(u.Reason, tc.want) {
				t.Errorf("reason = %q, want prefix %q", u.Reason, tc.want)
			}
			if got := states(h.updates(name)); len(got) != 1 {
				t.Errorf("updates = %v, want only FAILED", got)
			}
		})
	}
}

// Ensure an executable the kernel refuses fails the attempt after Starting.
func TestCannotExec(t *testing.T) {
	h := newHarness(t, Options{})
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("not a program"), 0o755)
	h.start(executor.Attempt{ID: "a", Payload: job{Entrypoint: []string{bad}}.payload()})
	u := h.await("a", executor.Failed)
	if want := "CannotStart: algo-1: fork/exec " + bad + ": exec format error"; u.Reason != want {
		t.Errorf("reason = %q, want %q", u.Reason, want)
	}
}

// Ensure Start and Stop are idempotent and Stop of unknown or ended
// attempts does nothing.
func TestIdempotent(t *testing.T) {
	h := newHarness(t, Options{})
	a := attemptOf("a", "j", sh("echo once >> \"$SM_CHECKPOINT_DIR/runs\""))
	h.start(a)
	h.start(a)
	h.await("a", executor.Succeeded)
	h.start(a)
	h.stop("a", time.Second)
	h.stop("unknown", time.Second)
	if got := len(h.updates("a")); got != 3 {
		t.Errorf("%d updates, want 3", got)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "checkpoints", "j", "runs")); string(b) != "once\n" {
		t.Errorf("runs = %q", b)
	}
	if err := h.e.Start(t.Context(), executor.Attempt{ID: "../x"}); err == nil {
		t.Error("Start with a path as ID succeeded")
	}
}

// Ensure n instances run as algo-1..algo-n with their own variables, and
// are stopped together.
func TestMultiInstance(t *testing.T) {
	h := newHarness(t, Options{})
	a := attemptOf("multi", "j", sh(`echo "$SM_CURRENT_HOST $SM_HOSTS $SM_CURRENT_INSTANCE_TYPE $SM_MODEL_DIR"; echo ready; sleep 30 & wait`))
	a.Instances = []executor.Instances{{Type: "ml.m5.xlarge", Count: 2}, {Type: "ml.c5.xlarge", Count: 1}}
	h.start(a)
	h.await("multi", executor.Running)
	types := []string{"ml.m5.xlarge", "ml.m5.xlarge", "ml.c5.xlarge"}
	for i, host := range []string{"algo-1", "algo-2", "algo-3"} {
		out := waitFile(t, filepath.Join(h.attemptDir("multi"), "logs", host+".stdout"), "ready")
		want := host + ` ["algo-1","algo-2","algo-3"] ` + types[i] + " " + h.treePath("multi", host, "model")
		if first, _, _ := strings.Cut(out, "\n"); first != want {
			t.Errorf("%s: %q, want %q", host, first, want)
		}
	}
	pids := hostPIDs(h.status("multi"))
	h.stop("multi", 10*time.Second)
	u := h.await("multi", executor.Stopped)
	if u.Reason != "Stopped" {
		t.Errorf("reason = %q", u.Reason)
	}
	assertGone(t, pids)
}

// Ensure one instance dying fails the attempt and takes the others down.
func TestMultiInstanceOneFails(t *testing.T) {
	h := newHarness(t, Options{})
	a := attemptOf("multi", "j", sh(`echo ready; sleep 30 & wait`))
	a.Instances = []executor.Instances{{Type: "ml.m5.xlarge", Count: 3}}
	h.start(a)
	h.await("multi", executor.Running)
	st := h.status("multi")
	pids := hostPIDs(st)
	waitFile(t, filepath.Join(h.attemptDir("multi"), "logs", "algo-2.stdout"), "ready")
	syscall.Kill(st.Hosts[1].PID, syscall.SIGKILL)
	u := h.await("multi", executor.Failed)
	if u.ExitCode != 137 || u.Reason != "exit code 137 (killed) on algo-2: " && !strings.HasPrefix(u.Reason, "exit code 137 (killed) on algo-2") {
		t.Errorf("exit %d, reason %q", u.ExitCode, u.Reason)
	}
	assertGone(t, pids)
}

func hostPIDs(st status) []int {
	var pids []int
	for _, hp := range st.Hosts {
		pids = append(pids, hp.PID)
	}
	return pids
}

// assertGone checks that no process is left in the given process groups.
func assertGone(t *testing.T, pgids []int) {
	t.Helper()
	var left []int
	eachProc(func(pid int, ps procStat) {
		if slices.Contains(pgids, ps.PGID) {
			left = append(left, pid)
		}
	})
	if len(left) > 0 {
		t.Errorf("processes left in groups %v: %v", pgids, left)
	}
}
