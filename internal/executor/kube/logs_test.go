package kube

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Ensure an instance's log is read through the API server, from an
// offset, and that a failure's reason ends with its last lines.
func TestLogsThroughTheAPIServer(t *testing.T) {
	h := newHarness(t)
	// One instance: a failure deletes the other instances' pods, and
	// which of two exits first is the scheduler's.
	h.start(newAttempt("fails", "ml.g5.xlarge", 1, map[string]string{"KWOK_RUN": "500ms", "KWOK_EXIT_CODE": "2"}))
	h.start(newAttempt("talks", "ml.g5.xlarge", 2, map[string]string{"KWOK_RUN": "500ms"}))
	u := h.wait("fails", executor.Failed, wait)
	if !strings.HasSuffix(u.Reason, "epoch 1 loss 0.9\nepoch 2 loss 0.5") {
		t.Errorf("reason %q, want it to end with the log's last lines", u.Reason)
	}
	h.wait("talks", executor.Succeeded, wait)
	read := func(host, stream string, offset int64) string {
		t.Helper()
		r, err := h.ex.Logs(context.Background(), "talks", host, stream, offset)
		if err != nil {
			t.Fatalf("Logs %s %s: %v", host, stream, err)
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	if got, want := read("algo-2", "stdout", 0), "epoch 1 loss 0.9\nepoch 2 loss 0.5\n"; got != want {
		t.Errorf("algo-2's log %q, want %q", got, want)
	}
	if got, want := read("algo-1", "stdout", 17), "epoch 2 loss 0.5\n"; got != want {
		t.Errorf("algo-1's log from 17 %q, want %q", got, want)
	}
	if got := read("algo-1", "stderr", 0); got != "" {
		t.Errorf("stderr %q, want it empty (Kubernetes keeps one stream)", got)
	}
	if _, err := h.ex.Logs(context.Background(), "nobody", "algo-1", "stdout", 0); !errors.Is(err, executor.ErrNoLogs) {
		t.Errorf("Logs of an unknown attempt: %v, want ErrNoLogs", err)
	}
}
