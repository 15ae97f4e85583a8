package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure an attempt whose channel an earlier try of it staged (a server
// killed after staging, before the hand-over) is staged afresh.
func TestRestageAfterRestart(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/train/a.csv", "1,2\n")
	dst := filepath.Join(h.attemptDir("r"), "hosts", "algo-1", "input", "data", "train")
	os.MkdirAll(dst, 0o755)
	os.WriteFile(filepath.Join(dst, "stale.csv"), []byte("old\n"), 0o644)
	os.MkdirAll(filepath.Join(filepath.Dir(dst), ".train.staging-1"), 0o755)
	j := sh(`ls -A "$SM_CHANNEL_TRAIN"; ls -A "$SM_CHANNEL_TRAIN/.."`)
	j.Channels = map[string]string{"train": "s3://jobs/data/train"}
	h.start(attemptOf("r", "j", j))
	h.await("r", executor.Succeeded)
	if got := h.log("r", "algo-1", "stdout"); got != "a.csv\ntrain\n" {
		t.Errorf("the channel and its parent hold %q, want a.csv alone and train alone", got)
	}
}

// Ensure a server restarted while a channel is staged stages it again and
// runs the job.
func TestRestartWhileStaging(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/big/blob", strings.Repeat("x", 64<<20))
	j := sh(`wc -c < "$SM_CHANNEL_TRAIN/blob"`)
	j.Channels = map[string]string{"train": "s3://jobs/data/big"}
	h.start(attemptOf("s", "j", j))
	h.await("s", executor.Starting)
	h.reopen()
	h.awaitWithin("s", executor.Succeeded, time.Minute)
	if got := strings.TrimSpace(h.log("s", "algo-1", "stdout")); got != "67108864" {
		t.Errorf("the job read %q bytes", got)
	}
}

// Ensure an attempt that never ran (its program cannot be executed) is not
// reported running while its outputs are looked after, and sends none.
func TestNeverRanIsNotRunning(t *testing.T) {
	h := newHarness(t, Options{NoMountNamespace: true})
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("\x00\x01\x02binary"), 0o755)
	out := t.TempDir()
	h.start(attemptOf("n", "j", job{Entrypoint: []string{bad}, OutputPath: "file://" + out}))
	h.await("n", executor.Failed)
	for _, u := range h.updates("n") {
		if u.State == executor.Running {
			t.Errorf("reported Running (%q) for an attempt that never ran", u.Reason)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("outputs sent for an attempt that never ran: %v", ents)
	}
}

// Ensure an attempt that ended while no executor listened keeps its GPUs
// until its outputs are sent and its end reported.
func TestReattachHoldsGPUs(t *testing.T) {
	h := newHarness(t, Options{GPUs: []int{0}})
	out := t.TempDir()
	ja := sh(`echo ready; sleep 1; head -c 40000000 /dev/urandom > "$SM_MODEL_DIR/big"`)
	ja.OutputPath = "file://" + out
	a := attemptOf("a", "a", ja)
	a.Instances = []executor.Instances{{Type: "ml.g5.xlarge", Count: 1}}
	h.start(a)
	h.await("a", executor.Running)
	b := attemptOf("b", "b", sh(`echo b`))
	b.Instances = []executor.Instances{{Type: "ml.g5.xlarge", Count: 1}}
	h.start(b) // waits for GPU 0
	h.e.Close()
	testwait.True(t, waitTimeout, "a to end", func() bool { st := h.status("a"); return st.ended() })
	var order []string
	h.mu.Lock()
	h.onUpdate = func(u executor.Update) { order = append(order, u.AttemptID+":"+string(u.State)) }
	h.mu.Unlock()
	h.reopen()
	h.await("a", executor.Succeeded)
	h.await("b", executor.Succeeded)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range order {
		if o == "a:SUCCEEDED" {
			return
		}
		if strings.HasPrefix(o, "b:") {
			t.Errorf("b started (%s) on a's GPU before a's end was reported: %v", o, order)
			return
		}
	}
}
