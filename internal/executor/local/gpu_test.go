package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// fakeNvidiaSMI puts an nvidia-smi that lists n GPUs first on PATH.
func fakeNvidiaSMI(t *testing.T, n int) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n"
	for i := range n {
		script += "echo " + string(rune('0'+i)) + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// gpuJob prints its devices and runs until stopped.
var gpuJob = sh(`echo "$CUDA_VISIBLE_DEVICES/$SM_NUM_GPUS"; sleep 30 & wait`)

func gpuAttempt(id, typ string, count int) executor.Attempt {
	a := attemptOf(id, id, gpuJob)
	a.Instances = []executor.Instances{{Type: typ, Count: count}}
	return a
}

func (h *harness) devices(id, host string) string {
	h.tb.Helper()
	out := waitFile(h.tb, filepath.Join(h.attemptDir(id), logsDir, host+".stdout"), "/")
	return strings.TrimSpace(out)
}

// Ensure concurrent attempts get disjoint GPUs, one set per instance, and
// an attempt waits for GPUs rather than share them.
func TestGPUPinning(t *testing.T) {
	fakeNvidiaSMI(t, 4)
	h := openHarness(t, Options{})
	if got := h.e.opts.GPUs; len(got) != 4 {
		t.Fatalf("detected GPUs %v, want 0..3", got)
	}
	h.start(gpuAttempt("a", "ml.g5.xlarge", 2))
	h.await("a", executor.Running)
	h.start(gpuAttempt("b", "ml.g5.2xlarge", 1))
	h.await("b", executor.Running)
	got := []string{h.devices("a", "algo-1"), h.devices("a", "algo-2"), h.devices("b", "algo-1")}
	want := []string{"0/1", "1/1", "2/1"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("devices %v, want %v", got, want)
			break
		}
	}

	h.start(gpuAttempt("c", "ml.g5.12xlarge", 1)) // 4 GPUs, 1 free

	time.Sleep(200 * time.Millisecond) // real processes: a wrong start of c, without free GPUs, is seen only by waiting
	if ups := h.updates("c"); len(ups) != 0 {
		t.Fatalf("c reported %v without free GPUs", states(ups))
	}
	h.stop("a", time.Second)
	h.stop("b", time.Second)
	h.await("c", executor.Running)
	if got := h.devices("c", "algo-1"); got != "0,1,2,3/4" {
		t.Errorf("c devices %q, want all four", got)
	}
	h.stop("c", time.Second)
	h.await("c", executor.Stopped)
}

// Ensure CPU instances on a GPU machine see no GPU, and an attempt that
// needs more GPUs than exist cannot start.
func TestGPUNeeds(t *testing.T) {
	h := newHarness(t, Options{GPUs: []int{4, 5}, GPUsPerInstance: map[string]int{"custom.gpu": 2}})
	a := attemptOf("cpu", "j1", sh(`echo "[$CUDA_VISIBLE_DEVICES]/$SM_NUM_GPUS"`))
	a.Instances = []executor.Instances{{Type: "ml.m5.xlarge", Count: 1}}
	h.start(a)
	h.await("cpu", executor.Succeeded)
	if got := strings.TrimSpace(h.log("cpu", "algo-1", "stdout")); got != "[]/0" {
		t.Errorf("cpu instance sees %q", got)
	}
	h.start(gpuAttempt("custom", "custom.gpu", 1))
	if got := h.devices("custom", "algo-1"); got != "4,5/2" {
		t.Errorf("custom type sees %q", got)
	}
	h.stop("custom", time.Second)
	h.start(gpuAttempt("big", "ml.p4d.24xlarge", 1))
	if u := h.await("big", executor.Failed); u.Reason != "CannotStart: needs 8 GPUs, this machine has 2" {
		t.Errorf("reason = %q", u.Reason)
	}
	h.await("custom", executor.Stopped)
}

// Ensure a machine without nvidia-smi has no GPUs and runs GPU types as
// plain slots.
func TestNoNvidiaSMI(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	if _, err := os.Stat("/usr/bin/nvidia-smi"); err == nil {
		t.Skip("this machine has nvidia-smi")
	}
	h := openHarness(t, Options{})
	h.start(gpuAttempt("a", "ml.p4d.24xlarge", 2))
	h.await("a", executor.Running)
	if got := h.devices("a", "algo-2"); got != "/0" {
		t.Errorf("devices %q, want none", got)
	}
	h.stop("a", time.Second)
	h.await("a", executor.Stopped)
}
