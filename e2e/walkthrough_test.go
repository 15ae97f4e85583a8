package e2e

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// trainingJobArn is what PySDK's get_model_trainer requires of an
// attempt's serviceResourceId.
var trainingJobArn = regexp.MustCompile(`^arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:training-job/(.+)$`)

// The announcement's walkthrough (walkthrough.md) through the real binary
// with the AWS SDK for Go, the local executor running each job as
// `sleep 600`: steps 1 to 3 with their expected states, then the
// additional checks. The server checks signatures: an administrator's key
// sets up and reads, and each share's team submits, updates and
// terminates its own jobs with its own key.
func TestWalkthroughSDK(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := createKey(t, dir, "admin", "AdministratorAccess")
	s := startServer(t, serverOptions{dataDir: dir, executor: "local", args: []string{"--stop-grace", "5s", "--auth", "sigv4"}})
	c := s.clientWith(admin)
	applyTeamPolicies(t, s, admin)
	keys := map[string]key{}
	for _, sh := range walkthroughShares {
		keys[sh.name] = createKey(t, dir, "team-"+sh.name, "team-"+sh.name)
	}
	live := walkthroughSDK(t, c, func(share string) *batch.Client { return s.clientWith(keys[share]) })
	endAll(t, c, live, s.dataDir, s.cmd.Process.Pid)
	s.stop()
}

// The walkthrough through a follower of three servers on one PostgreSQL
// store: every request is forwarded to the leader.
func TestWalkthroughReplicas(t *testing.T) {
	t.Parallel()
	rs := startReplicaSet(t, 3, "--stop-grace", "5s")
	lead, _ := rs.leader(60 * time.Second)
	follower := rs.replicas[(slices.Index(rs.replicas, lead)+1)%len(rs.replicas)]
	c := follower.client()
	live := walkthroughSDK(t, c, func(string) *batch.Client { return c })
	var pids []int
	for _, r := range rs.replicas {
		pids = append(pids, r.cmd.Process.Pid)
	}
	endAll(t, c, live, rs.dataDir, pids...)
}

// walkthroughSDK runs the walkthrough's steps and checks through c, with
// each share's submissions, updates and terminations through team(share),
// and returns the jobs it leaves running.
func walkthroughSDK(t *testing.T, c *batch.Client, team func(share string) *batch.Client) (live []string) {
	setUpWalkthrough(t, c, 3)
	running := []types.ServiceJobStatus{types.ServiceJobStatusRunning}
	runnable := []types.ServiceJobStatus{types.ServiceJobStatusRunnable}
	sub := func(j jobSpec) string {
		t.Helper()
		arn := submit(t, team(j.share), j)
		live = append(live, arn)
		return arn
	}

	_, err := c.SubmitServiceJob(ctx(t), submitInput(jobSpec{name: "no_share", priority: 1}))
	wantClientException(t, "SubmitServiceJob without quotaShareName to a quota-share queue", err, "quotaShareName")

	// Step 1: high runs on QS1's instance, med borrows QS2's idle one, low
	// waits: QS3 is RESERVE and lends nothing.
	high := sub(jobSpec{name: "qs1_job_high", share: "QS1", priority: 3})
	med := sub(jobSpec{name: "qs1_job_med", share: "QS1", priority: 2})
	low := sub(jobSpec{name: "qs1_job_low", share: "QS1", priority: 1})
	highAttempt := waitStatus(t, c, high, running...).LatestAttempt
	waitStatus(t, c, med, running...)
	waitStatus(t, c, low, runnable...)
	snap := snapshot(t, c)
	if got := shareUsage(snap, "QS1"); got != 2 {
		t.Errorf("step 1: QS1 uses %v ml.g5.xlarge, want 2 (its own and QS2's)", got)
	}
	if got := totalUsage(snap); got != 2 {
		t.Errorf("step 1: the queue uses %v of 3 instances, want 2 (QS3's stays idle)", got)
	}
	wantFront(t, "step 1", snap, map[string][]string{"QS1": {low}, "QS2": {}, "QS3": {}})

	// Step 2: QS2 takes back the instance QS1 borrowed for med.
	qs2job1 := sub(jobSpec{name: "qs2_job_1", share: "QS2", priority: 1})
	waitStatus(t, c, qs2job1, running...)
	m := waitStatus(t, c, med, runnable...)
	if preempted(m) != 1 || len(m.PreemptionSummary.RecentPreemptedAttempts) != 1 {
		t.Fatalf("step 2: qs1_job_med preemptionSummary %s, want preemptedAttemptCount 1 with one recent attempt", js(m.PreemptionSummary))
	}
	pa := m.PreemptionSummary.RecentPreemptedAttempts[0]
	if r := aws.ToString(pa.StatusReason); !strings.Contains(strings.ToLower(r), "preempt") || !strings.Contains(r, "QS2") {
		t.Errorf("step 2: qs1_job_med's preempted attempt says %q, want a preemption reason naming QS2", r)
	}
	if pa.ServiceResourceId == nil || !trainingJobArn.MatchString(aws.ToString(pa.ServiceResourceId.Value)) ||
		aws.ToInt64(pa.StartedAt) == 0 || aws.ToInt64(pa.StoppedAt) < aws.ToInt64(pa.StartedAt) {
		t.Errorf("step 2: qs1_job_med's preempted attempt %s, want a training-job ARN, startedAt and stoppedAt", js(pa))
	}
	h := describe(t, c, high)
	if h.Status != types.ServiceJobStatusRunning || len(h.Attempts) != 1 || js(h.LatestAttempt) != js(highAttempt) {
		t.Errorf("step 2: qs1_job_high is %s with %d attempts, want it still RUNNING its first attempt", h.Status, len(h.Attempts))
	}
	waitStatus(t, c, low, runnable...)
	if got := totalUsage(snapshot(t, c)); got != 2 {
		t.Errorf("step 2: the queue uses %v instances, want 2", got)
	}

	// Step 3: raising low above high preempts high inside QS1.
	up, err := team("QS1").UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(low), SchedulingPriority: aws.Int32(4)})
	fatalIf(t, "UpdateServiceJob", err)
	if aws.ToString(up.JobArn) != low || aws.ToString(up.JobName) != "qs1_job_low" {
		t.Errorf("UpdateServiceJob answered %s, want jobArn %s and jobName qs1_job_low", js(up), low)
	}
	waitStatus(t, c, low, running...)
	if h := waitStatus(t, c, high, runnable...); preempted(h) != 1 {
		t.Errorf("step 3: qs1_job_high preempted %d times, want 1", preempted(h))
	}
	if m := describe(t, c, med); m.Status != types.ServiceJobStatusRunnable || aws.ToInt32(m.SchedulingPriority) != 2 {
		t.Errorf("step 3: qs1_job_med is %s with priority %d, want RUNNABLE with 2", m.Status, aws.ToInt32(m.SchedulingPriority))
	}
	if q := describe(t, c, qs2job1); q.Status != types.ServiceJobStatusRunning || preempted(q) != 0 {
		t.Errorf("step 3: qs2_job_1 is %s, preempted %d times; want it RUNNING and untouched", q.Status, preempted(q))
	}
	snap = snapshot(t, c)
	wantFront(t, "step 3", snap, map[string][]string{"QS1": {high}, "QS2": {}, "QS3": {}})
	if got := frontOfQueue(snap); !slices.Equal(got, []string{high, med}) {
		t.Errorf("step 3: frontOfQueue %v, want [qs1_job_high qs1_job_med] = %v", got, []string{high, med})
	}
	if got := shareUsage(snap, "QS1"); got != 1 {
		t.Errorf("step 3: QS1 uses %v instances, want 1", got)
	}

	// A job for QS3 runs at once on QS3's reserved instance and preempts
	// nobody.
	qs3job := sub(jobSpec{name: "qs3_job_1", share: "QS3", priority: 1})
	waitStatus(t, c, qs3job, running...)
	for job, want := range map[string]types.ServiceJobStatus{low: "RUNNING", qs2job1: "RUNNING", high: "RUNNABLE", med: "RUNNABLE"} {
		if d := describe(t, c, job); d.Status != want {
			t.Errorf("after qs3_job_1: %s is %s, want %s", aws.ToString(d.JobName), d.Status, want)
		}
	}
	if got := totalUsage(snapshot(t, c)); got != 3 {
		t.Errorf("after qs3_job_1: the queue uses %v instances, want all 3", got)
	}

	// A 2-instance job can never fit QS2 (LEND, limit 1).
	big := sub(jobSpec{name: "qs2_job_big", share: "QS2", priority: 1, instances: 2})
	const misconfigured = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share capacity limits."
	testwait.Until(t, 10*time.Second, func() error {
		d, err := c.DescribeServiceJob(ctx(t), &batch.DescribeServiceJobInput{JobId: aws.String(big)})
		if err != nil {
			return err
		}
		if d.Status != types.ServiceJobStatusRunnable || aws.ToString(d.StatusReason) != misconfigured {
			return notYet("qs2_job_big is %s with statusReason %q, want RUNNABLE with %q", d.Status, aws.ToString(d.StatusReason), misconfigured)
		}
		return nil
	})
	terminate(t, team("QS2"), big, "cannot run")

	// qs2_job_1 ends: QS2's idle instance goes to QS1's head, high.
	terminate(t, team("QS2"), qs2job1, "done")
	if h := waitStatus(t, c, high, running...); len(h.Attempts) != 2 {
		t.Errorf("qs1_job_high has %d attempts after borrowing again, want 2", len(h.Attempts))
	}
	waitStatus(t, c, med, runnable...)
	if got := shareUsage(snapshot(t, c), "QS1"); got != 2 {
		t.Errorf("after qs2_job_1 ended: QS1 uses %v instances, want 2 (one borrowed from QS2)", got)
	}

	// A job that may not be preempted (preemptionRetriesBeforeTermination
	// 0) fails when the capacity it borrowed is reclaimed.
	qs2job2 := sub(jobSpec{name: "qs2_job_2", share: "QS2", priority: 1})
	waitStatus(t, c, qs2job2, running...)
	if h := waitStatus(t, c, high, runnable...); preempted(h) != 2 {
		t.Errorf("qs1_job_high preempted %d times after QS2 reclaimed again, want 2", preempted(h))
	}
	fragile := sub(jobSpec{name: "qs1_job_fragile", share: "QS1", priority: 4, retries: aws.Int32(0)})
	waitStatus(t, c, fragile, runnable...)
	if d := describe(t, c, low); d.Status != types.ServiceJobStatusRunning {
		t.Errorf("qs1_job_low is %s after an equal-priority job arrived, want RUNNING", d.Status)
	}
	terminate(t, team("QS2"), qs2job2, "done")
	waitStatus(t, c, fragile, running...)
	qs2job3 := sub(jobSpec{name: "qs2_job_3", share: "QS2", priority: 1})
	waitStatus(t, c, qs2job3, running...)
	f := waitStatus(t, c, fragile, types.ServiceJobStatusFailed)
	if r := aws.ToString(f.StatusReason); !strings.Contains(strings.ToLower(r), "preempt") || preempted(f) != 1 {
		t.Errorf("qs1_job_fragile FAILED with statusReason %q after %d preemptions, want a preemption reason after 1", r, preempted(f))
	}

	return live
}

// endAll terminates the jobs; the local executor's processes under
// dataDir (other than the servers' and the supervisor's) must go with
// them.
func endAll(t *testing.T, c *batch.Client, live []string, dataDir string, servers ...int) {
	for _, job := range live {
		_, err := c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(job), Reason: aws.String("walkthrough over")})
		fatalIf(t, "TerminateServiceJob", err)
	}
	for _, job := range live {
		waitStatus(t, c, job, types.ServiceJobStatusFailed, types.ServiceJobStatusSucceeded)
	}
	testwait.Until(t, 30*time.Second, func() error {
		if pids := processesUnder(dataDir, append(servers, supervisorsOf(dataDir)...)...); len(pids) > 0 {
			return notYet("processes %v of terminated jobs still run", pids)
		}
		return nil
	})
}

// terminate terminates a job and waits until it is FAILED with the reason.
func terminate(t *testing.T, c *batch.Client, job, reason string) {
	t.Helper()
	_, err := c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(job), Reason: aws.String(reason)})
	fatalIf(t, "TerminateServiceJob", err)
	d := waitStatus(t, c, job, types.ServiceJobStatusFailed)
	if !aws.ToBool(d.IsTerminated) || aws.ToString(d.StatusReason) != reason {
		t.Errorf("terminated %s: isTerminated %v, statusReason %q; want true and %q",
			aws.ToString(d.JobName), aws.ToBool(d.IsTerminated), aws.ToString(d.StatusReason), reason)
	}
}

// wantFront checks frontOfQuotaShares: every share a key, with its first
// RUNNABLE job or nothing.
func wantFront(t *testing.T, when string, s *batch.GetJobQueueSnapshotOutput, want map[string][]string) {
	t.Helper()
	for share, jobs := range want {
		if got := shareFront(s, share); got == nil || !slices.Equal(got, jobs) {
			t.Errorf("%s: frontOfQuotaShares[%s] = %v, want %v (present even when empty)", when, share, got, jobs)
		}
	}
}

// frontOfQueue lists the job ARNs of a snapshot's frontOfQueue.
func frontOfQueue(s *batch.GetJobQueueSnapshotOutput) []string {
	var out []string
	if s.FrontOfQueue != nil {
		for _, j := range s.FrontOfQueue.Jobs {
			out = append(out, aws.ToString(j.JobArn))
		}
	}
	return out
}
