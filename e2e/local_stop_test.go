package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// checkpointing is a training loop that resumes from $SM_CHECKPOINT_DIR/step
// and, on SIGTERM, saves the step it reached there. A resumed run ends
// after three more steps; a fresh one runs until it is stopped.
const checkpointing = `
ckpt="$SM_CHECKPOINT_DIR/step"
step=0 resumed=
if [ -f "$ckpt" ]; then step=$(cat "$ckpt"); resumed=$step; echo "resumed from step $step"; fi
trap 'echo "$step" > "$ckpt"; echo "checkpointed step $step"; exit 143' TERM
while :; do
  step=$((step+1)); echo "step $step"
  if [ -n "$resumed" ] && [ "$step" -ge $((resumed+3)) ]; then echo "done at step $step"; exit 0; fi
  sleep 0.2 & wait $!
done
`

// A job that checkpoints on SIGTERM is preempted in its share and resumes
// from its checkpoint (CheckpointConfig.LocalPath, seen as
// SM_CHECKPOINT_DIR) on its next attempt, which completes it. Its
// retryStrategy allows one attempt: preemptions do not use attempts up.
func TestLocalCheckpointResume(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "2s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	ckptDir := filepath.Join(t.TempDir(), "ckpt")

	train := s.submitLocal(t, c, localJob{name: "train", share: "QS1", priority: 1, argv: shell(checkpointing), checkpoint: ckptDir,
		retry: retryStrategy(1)})
	waitStatus(t, c, train, types.ServiceJobStatusRunning)
	// QS2's own instance is taken, so that QS1 cannot borrow it and its
	// urgent job must preempt train.
	qs2 := s.submitLocal(t, c, localJob{name: "qs2_busy", share: "QS2", priority: 1})
	waitStatus(t, c, qs2, types.ServiceJobStatusRunning)
	first := attemptID(t, describe(t, c, train).LatestAttempt.ServiceResourceId)
	testwait.Until(t, 30*time.Second, func() error {
		if out := s.attemptLog(t, first, "stdout"); !strings.Contains(out, "step 2\n") {
			return notYet("train's first attempt printed %q, want it to reach step 2", out)
		}
		return nil
	})

	urgent := s.submitLocal(t, c, localJob{name: "urgent", share: "QS1", priority: 9})
	waitStatus(t, c, urgent, types.ServiceJobStatusRunning)
	if end := s.waitAttemptEnd(t, first, 30*time.Second); end.State != "STOPPED" || end.ExitCode != 143 || end.Reason != "Stopped" {
		t.Errorf("train's preempted attempt ended %+v, want STOPPED with the script's exit code 143, before any SIGKILL", end)
	}
	out := s.attemptLog(t, first, "stdout")
	m := regexp.MustCompile(`checkpointed step (\d+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("train's first attempt printed %q, want a line \"checkpointed step N\" written on SIGTERM", out)
	}
	saved, err := os.ReadFile(filepath.Join(ckptDir, "step"))
	if err != nil || strings.TrimSpace(string(saved)) != m[1] {
		t.Fatalf("checkpoint file %s holds %q (%v), want the step %s the job saved", filepath.Join(ckptDir, "step"), saved, err, m[1])
	}

	// Freeing QS1's instance gives it back to train.
	s.endAll(t, c, urgent)
	d := waitStatus(t, c, train, types.ServiceJobStatusSucceeded)
	if len(d.Attempts) != 2 || preempted(d) != 1 {
		t.Fatalf("train SUCCEEDED with %d attempts and %d preemptions, want 2 and 1", len(d.Attempts), preempted(d))
	}
	second := attemptID(t, d.Attempts[1].ServiceResourceId)
	step, _ := strconv.Atoi(m[1])
	want := fmt.Sprintf("resumed from step %d\nstep %d\n", step, step+1)
	if out := s.attemptLog(t, second, "stdout"); !strings.HasPrefix(out, want) || !strings.Contains(out, fmt.Sprintf("done at step %d\n", step+3)) {
		t.Errorf("train's second attempt printed %q, want it to start with %q and finish at step %d", out, want, step+3)
	}

	s.endAll(t, c, qs2)
	s.waitEnded(t, c, train)
	s.stop()
}

// A job that ignores SIGTERM is killed with SIGKILL once the grace period
// (--stop-grace 2s) has passed; its preempted attempt says so, and its
// preemptor starts only after it is gone.
func TestLocalGraceKill(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "2s")
	c := s.client()
	setUpWalkthrough(t, c, 3)

	stubborn := s.submitLocal(t, c, localJob{name: "stubborn", share: "QS1", priority: 1,
		argv: shell(`trap '' TERM; echo started; while :; do sleep 0.2; done`)})
	waitStatus(t, c, stubborn, types.ServiceJobStatusRunning)
	qs2 := s.submitLocal(t, c, localJob{name: "qs2_busy", share: "QS2", priority: 1})
	waitStatus(t, c, qs2, types.ServiceJobStatusRunning)
	first := attemptID(t, describe(t, c, stubborn).LatestAttempt.ServiceResourceId)
	testwait.Until(t, 30*time.Second, func() error {
		if out := s.attemptLog(t, first, "stdout"); out != "started\n" {
			return notYet("stubborn printed %q, want \"started\" once its trap is set", out)
		}
		return nil
	})

	urgent := s.submitLocal(t, c, localJob{name: "urgent", share: "QS1", priority: 9})
	waitStatus(t, c, urgent, types.ServiceJobStatusRunning)
	end := s.waitAttemptEnd(t, first, 30*time.Second)
	if end.State != "STOPPED" || end.ExitCode != 128+9 || !strings.Contains(end.Reason, "SIGKILL after 2s") {
		t.Errorf("stubborn's attempt ended %+v, want STOPPED by SIGKILL (exit code 137) after the 2s grace period", end)
	}
	d := waitStatus(t, c, stubborn, types.ServiceJobStatusRunnable)
	if preempted(d) != 1 || len(d.PreemptionSummary.RecentPreemptedAttempts) != 1 {
		t.Fatalf("stubborn's preemptionSummary %s, want one preempted attempt", js(d.PreemptionSummary))
	}
	if r := aws.ToString(d.Attempts[0].StatusReason); !strings.Contains(r, "in-share preemption") || !strings.Contains(r, "killed with SIGKILL after 2s grace period") {
		t.Errorf("stubborn's first attempt's statusReason %q, want the preemption and that it was killed with SIGKILL after the 2s grace period", r)
	}
	if r := aws.ToString(d.PreemptionSummary.RecentPreemptedAttempts[0].StatusReason); !strings.Contains(r, "killed with SIGKILL after 2s grace period") {
		t.Errorf("stubborn's recent preempted attempt statusReason %q, want it to say it was killed with SIGKILL after the 2s grace period", r)
	}
	u := describe(t, c, urgent)
	if start := s.startedAt(t, attemptID(t, u.LatestAttempt.ServiceResourceId)); start.Before(end.At) {
		t.Errorf("urgent started at %v, before stubborn's processes were killed at %v", start, end.At)
	}
	// stubborn's attempt stopped when its processes were gone, the grace
	// period after urgent came; urgent started after that.
	stopped := aws.ToInt64(d.Attempts[0].StoppedAt)
	if got := time.Duration(stopped-aws.ToInt64(u.CreatedAt)) * time.Millisecond; got < 2*time.Second {
		t.Errorf("stubborn's preempted attempt stopped %v after urgent was submitted, want at least the 2s grace period", got)
	}
	if aws.ToInt64(u.StartedAt) < stopped {
		t.Errorf("urgent started at %d, before stubborn's attempt stopped at %d", aws.ToInt64(u.StartedAt), stopped)
	}

	s.endAll(t, c, stubborn, urgent, qs2)
	s.stop()
}
