package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// retryStrategy tries a job up to attempts times; rules are
// (onStatusReason glob, action) pairs.
func retryStrategy(attempts int32, rules ...string) *types.ServiceJobRetryStrategy {
	rs := &types.ServiceJobRetryStrategy{Attempts: aws.Int32(attempts)}
	for i := 0; i+1 < len(rules); i += 2 {
		rs.EvaluateOnExit = append(rs.EvaluateOnExit, types.ServiceJobEvaluateOnExit{
			OnStatusReason: aws.String(rules[i]), Action: types.ServiceJobRetryAction(rules[i+1])})
	}
	return rs
}

// Retries as the spec says: retryStrategy.attempts counts every try, a job
// whose command fails once then succeeds (it remembers through a file)
// succeeds on its second attempt, one that keeps failing fails after its
// last, and the first evaluateOnExit rule whose glob matches the failed
// attempt's statusReason decides: EXIT fails the job at once.
func TestLocalRetries(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	mem := filepath.Join(t.TempDir(), "tried")

	flaky := s.submitLocal(t, c, localJob{name: "flaky", share: "QS1", priority: 1, retry: retryStrategy(2),
		argv: shell(`if [ -f "$MEM" ]; then echo "second try"; exit 0; fi; touch "$MEM"; echo "disk hiccup" >&2; exit 3`),
		env:  map[string]string{"MEM": mem}})
	broken := s.submitLocal(t, c, localJob{name: "broken", share: "QS2", priority: 1, retry: retryStrategy(2),
		argv: shell(`echo "always broken" >&2; exit 4`)})
	fatal := s.submitLocal(t, c, localJob{name: "fatal", share: "QS3", priority: 1,
		retry: retryStrategy(5, "*hiccup*", "RETRY", "*bad config*", "EXIT"),
		argv:  shell(`echo "bad config: no such model" >&2; exit 2`)})

	f := waitStatus(t, c, flaky, types.ServiceJobStatusSucceeded)
	if len(f.Attempts) != 2 || !strings.HasPrefix(aws.ToString(f.Attempts[0].StatusReason), "exit code 3") ||
		!strings.Contains(aws.ToString(f.Attempts[0].StatusReason), "disk hiccup") {
		t.Errorf("flaky SUCCEEDED with attempts %s, want 2, the first failed with \"exit code 3: disk hiccup\"", js(f.Attempts))
	}
	if out := s.attemptLog(t, attemptID(t, f.Attempts[1].ServiceResourceId), "stdout"); out != "second try\n" {
		t.Errorf("flaky's second attempt printed %q, want \"second try\"", out)
	}
	b := waitStatus(t, c, broken, types.ServiceJobStatusFailed)
	if len(b.Attempts) != 2 || aws.ToString(b.StatusReason) != "exit code 4: always broken" {
		t.Errorf("broken FAILED with statusReason %q after %d attempts, want \"exit code 4: always broken\" after 2", aws.ToString(b.StatusReason), len(b.Attempts))
	}
	x := waitStatus(t, c, fatal, types.ServiceJobStatusFailed)
	if len(x.Attempts) != 1 || aws.ToString(x.StatusReason) != "exit code 2: bad config: no such model" {
		t.Errorf("fatal FAILED with statusReason %q after %d attempts, want \"exit code 2: bad config: no such model\" after 1 (its EXIT rule matched)",
			aws.ToString(x.StatusReason), len(x.Attempts))
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}

// An attempt that runs longer than timeoutConfig.attemptDurationSeconds is
// stopped and the job fails with "Attempt duration exceeded"; with attempts
// left in its retryStrategy it is tried again first.
func TestLocalTimeout(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)

	once := s.submitLocal(t, c, localJob{name: "slow", share: "QS1", priority: 1, timeout: 1})
	twice := s.submitLocal(t, c, localJob{name: "slow_retried", share: "QS3", priority: 1, timeout: 1, retry: retryStrategy(2)})
	for job, attempts := range map[string]int{once: 1, twice: 2} {
		d := waitStatus(t, c, job, types.ServiceJobStatusFailed)
		if aws.ToString(d.StatusReason) != "Attempt duration exceeded" || aws.ToBool(d.IsTerminated) || len(d.Attempts) != attempts {
			t.Errorf("%s FAILED with statusReason %q, isTerminated %v, %d attempts; want \"Attempt duration exceeded\", false, %d",
				aws.ToString(d.JobName), aws.ToString(d.StatusReason), aws.ToBool(d.IsTerminated), len(d.Attempts), attempts)
		}
		for i, a := range d.Attempts {
			if ran := aws.ToInt64(a.StoppedAt) - aws.ToInt64(a.StartedAt); ran < 1000 || ran > 20000 {
				t.Errorf("%s's attempt %d ran %d ms, want about the 1 s attemptDurationSeconds", aws.ToString(d.JobName), i+1, ran)
			}
		}
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}

// TerminateServiceJob ends a RUNNING job (FAILED, isTerminated, the reason
// given) and its process, as well as a RUNNABLE one, which never runs.
func TestLocalTerminate(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)

	run := s.submitLocal(t, c, localJob{name: "run", share: "QS3", priority: 1})
	wait := s.submitLocal(t, c, localJob{name: "wait", share: "QS3", priority: 1})
	waitStatus(t, c, run, types.ServiceJobStatusRunning)
	waitStatus(t, c, wait, types.ServiceJobStatusRunnable)
	pids := s.waitInstances(t, "run", 1, 30*time.Second)

	_, err := c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(wait), Reason: aws.String("not needed")})
	fatalIf(t, "TerminateServiceJob wait", err)
	_, err = c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(run), Reason: aws.String("cancelled by ops")})
	fatalIf(t, "TerminateServiceJob run", err)
	for job, attempts := range map[string]int{run: 1, wait: 0} {
		d := waitStatus(t, c, job, types.ServiceJobStatusFailed)
		want := map[string]string{run: "cancelled by ops", wait: "not needed"}[job]
		if !aws.ToBool(d.IsTerminated) || aws.ToString(d.StatusReason) != want || len(d.Attempts) != attempts {
			t.Errorf("terminated %s: isTerminated %v, statusReason %q, %d attempts; want true, %q, %d",
				aws.ToString(d.JobName), aws.ToBool(d.IsTerminated), aws.ToString(d.StatusReason), len(d.Attempts), want, attempts)
		}
	}
	s.waitGone(t, "run", 30*time.Second)
	d := describe(t, c, run)
	if end := s.waitAttemptEnd(t, attemptID(t, d.LatestAttempt.ServiceResourceId), 30*time.Second); end.State != "STOPPED" || end.ExitCode != 143 {
		t.Errorf("the terminated job's process %v ended %+v, want STOPPED by SIGTERM (exit code 143)", pids, end)
	}
	if got := aws.ToString(d.Attempts[0].StatusReason); got != "cancelled by ops" {
		t.Errorf("the terminated job's attempt has statusReason %q, want %q", got, "cancelled by ops")
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}
