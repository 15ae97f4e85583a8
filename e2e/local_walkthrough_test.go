package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// The walkthrough's steps 1 to 3 with the local executor, watching the
// processes: every dispatched job runs one `sleep 600`, a RUNNABLE job runs
// nothing, and a preempted job's process exits on SIGTERM (exit code 143)
// long before its grace period ends, before its preemptor starts.
func TestLocalWalkthroughProcesses(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "120s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	running := []types.ServiceJobStatus{types.ServiceJobStatusRunning}
	runnable := []types.ServiceJobStatus{types.ServiceJobStatusRunnable}
	const procWait = 30 * time.Second // far below the 120 s grace period

	// Step 1.
	high := s.submitLocal(t, c, localJob{name: "qs1_job_high", share: "QS1", priority: 3})
	med := s.submitLocal(t, c, localJob{name: "qs1_job_med", share: "QS1", priority: 2})
	low := s.submitLocal(t, c, localJob{name: "qs1_job_low", share: "QS1", priority: 1})
	waitStatus(t, c, high, running...)
	medJob := waitStatus(t, c, med, running...)
	waitStatus(t, c, low, runnable...)
	highPid := s.waitInstances(t, "qs1_job_high", 1, procWait)
	medPid := s.waitInstances(t, "qs1_job_med", 1, procWait)
	if got := cmdline(medPid[0]); !strings.HasSuffix(got, "sleep 600") {
		t.Errorf("step 1: qs1_job_med runs %q, want its payload's command sleep 600", got)
	}
	if pids := s.procs("qs1_job_low"); len(pids) != 0 {
		t.Errorf("step 1: RUNNABLE qs1_job_low has processes %v, want none", pids)
	}

	// Step 2: QS2 reclaims its instance; med's sleep gets SIGTERM and exits.
	qs2job1 := s.submitLocal(t, c, localJob{name: "qs2_job_1", share: "QS2", priority: 1})
	waitStatus(t, c, qs2job1, running...)
	m := waitStatus(t, c, med, runnable...)
	if preempted(m) != 1 {
		t.Fatalf("step 2: qs1_job_med preempted %d times, want 1", preempted(m))
	}
	s.waitGone(t, "qs1_job_med", procWait)
	medEnd := s.waitAttemptEnd(t, attemptID(t, medJob.LatestAttempt.ServiceResourceId), procWait)
	if medEnd.State != "STOPPED" || medEnd.ExitCode != 143 || medEnd.Reason != "Stopped" {
		t.Errorf("step 2: qs1_job_med's preempted attempt ended %+v, want STOPPED by SIGTERM (exit code 143) without SIGKILL", medEnd)
	}
	s.waitInstances(t, "qs2_job_1", 1, procWait)
	if start := s.startedAt(t, attemptID(t, describe(t, c, qs2job1).LatestAttempt.ServiceResourceId)); start.Before(medEnd.At) {
		t.Errorf("step 2: qs2_job_1 started at %v, before qs1_job_med's process ended at %v on the instance it reclaimed", start, medEnd.At)
	}
	if pids := s.instances("qs1_job_high"); !slices.Equal(pids, highPid) {
		t.Errorf("step 2: qs1_job_high's processes are %v, want its first one %v untouched", pids, highPid)
	}

	// Step 3: low outranks high inside QS1; high's sleep exits on SIGTERM.
	_, err := c.UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(low), SchedulingPriority: aws.Int32(4)})
	fatalIf(t, "UpdateServiceJob", err)
	waitStatus(t, c, low, running...)
	if h := waitStatus(t, c, high, runnable...); preempted(h) != 1 {
		t.Errorf("step 3: qs1_job_high preempted %d times, want 1", preempted(h))
	}
	s.waitGone(t, "qs1_job_high", procWait)
	highJob := describe(t, c, high)
	if end := s.waitAttemptEnd(t, attemptID(t, highJob.Attempts[0].ServiceResourceId), procWait); end.State != "STOPPED" || end.ExitCode != 143 {
		t.Errorf("step 3: qs1_job_high's preempted attempt ended %+v, want STOPPED by SIGTERM (exit code 143)", end)
	}
	s.waitInstances(t, "qs1_job_low", 1, procWait)
	if pids := s.procs("qs1_job_med"); len(pids) != 0 {
		t.Errorf("step 3: RUNNABLE qs1_job_med has processes %v, want none", pids)
	}
	if got := shareUsage(snapshot(t, c), "QS1"); got != 1 {
		t.Errorf("step 3: QS1 uses %v instances, want 1", got)
	}

	s.endAll(t, c, high, med, low, qs2job1)
	s.stop()
}
