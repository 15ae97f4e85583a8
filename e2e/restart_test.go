package e2e

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/google/go-cmp/cmp"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// A clean stop (SIGTERM) and a start on the same data dir keep every
// resource and every job exactly as it was, and scheduling goes on.
func TestRestartClean(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := s.client()
	setUpWalkthrough(t, c, 3)
	_, err := c.UpdateJobQueue(ctx(t), &batch.UpdateJobQueueInput{JobQueue: aws.String(queueName),
		JobStateTimeLimitActions: []types.JobStateTimeLimitAction{timeLimitAction(600)}})
	fatalIf(t, "UpdateJobQueue", err)
	_, err = c.TagResource(ctx(t), &batch.TagResourceInput{ResourceArn: aws.String(shareArn("QS1")), Tags: map[string]string{"cost-center": "42"}})
	fatalIf(t, "TagResource", err)

	// Walkthrough steps 1 to 3, and a job in every other state.
	running, runnable := types.ServiceJobStatusRunning, types.ServiceJobStatusRunnable
	high := submit(t, c, jobSpec{name: "qs1_job_high", share: "QS1", priority: 3})
	med := submit(t, c, jobSpec{name: "qs1_job_med", share: "QS1", priority: 2})
	low := submit(t, c, jobSpec{name: "qs1_job_low", share: "QS1", priority: 1})
	waitStatus(t, c, med, running)
	qs2 := submit(t, c, jobSpec{name: "qs2_job_1", share: "QS2", priority: 1})
	waitStatus(t, c, qs2, running)
	waitStatus(t, c, med, runnable)
	_, err = c.UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(low), SchedulingPriority: aws.Int32(4)})
	fatalIf(t, "UpdateServiceJob", err)
	waitStatus(t, c, low, running)
	waitStatus(t, c, high, runnable)
	done := submit(t, c, jobSpec{name: "qs3_quick", share: "QS3", priority: 1, env: map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "1"}})
	waitStatus(t, c, done, types.ServiceJobStatusSucceeded)
	stopped := submit(t, c, jobSpec{name: "qs3_stopped", share: "QS3", priority: 1})
	waitStatus(t, c, stopped, running)
	terminate(t, c, stopped, "stopped before the restart")
	big := submit(t, c, jobSpec{name: "qs2_big", share: "QS2", priority: 1, instances: 2})
	testwait.Until(t, 10*time.Second, func() error {
		if d := describe(t, c, big); aws.ToString(d.StatusReason) == "" {
			return notYet("qs2_big has no statusReason yet")
		}
		return nil
	})
	jobs := []string{high, med, low, qs2, done, stopped, big}
	_, err = c.UpdateQuotaShare(ctx(t), &batch.UpdateQuotaShareInput{QuotaShareArn: aws.String(shareArn("QS3")), State: types.QuotaShareStateDisabled})
	fatalIf(t, "UpdateQuotaShare QS3 DISABLED", err)

	before := world(t, s, jobs)
	s.stop()
	s = startServer(t, serverOptions{dataDir: s.dataDir})
	c = s.client()
	after := world(t, s, jobs)
	for _, k := range sortedKeys(before) {
		if diff := cmp.Diff(before[k], after[k]); diff != "" {
			t.Errorf("%s changed across the restart (-before +after):\n%s", k, diff)
		}
	}

	_, err = c.SubmitServiceJob(ctx(t), submitInput(jobSpec{name: "qs3_late", share: "QS3", priority: 1}))
	wantClientException(t, "SubmitServiceJob to QS3, DISABLED before the restart", err, "DISABLED")

	// The rebuilt scheduler goes on: low ends, high (the head of QS1)
	// takes QS1's instance back.
	terminate(t, c, low, "done")
	if h := waitStatus(t, c, high, running); len(h.Attempts) != 2 {
		t.Errorf("qs1_job_high has %d attempts after the restart, want 2", len(h.Attempts))
	}
	waitStatus(t, c, med, runnable)
	if got := totalUsage(snapshot(t, c)); got != 2 {
		t.Errorf("after the restart the queue uses %v instances, want 2 (qs1_job_high and qs2_job_1)", got)
	}
	s.stop()
}

// world reads every resource and the given jobs through the raw API, as
// documents keyed by what they are; times of the reading itself
// (lastUpdatedAt) are left out.
func world(t *testing.T, s *server, jobs []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	get := func(key, op string, in any) {
		t.Helper()
		status, doc := s.call(op, in)
		if status != 200 {
			t.Fatalf("%s %s answered %d: %v", op, js(in), status, doc)
		}
		out[key] = stripKey(doc, "lastUpdatedAt")
	}
	get("scheduling policy", "describeschedulingpolicies", map[string]any{"arns": []string{policyArn}})
	get("service environments", "describeserviceenvironments", map[string]any{})
	get("job queues", "describejobqueues", map[string]any{})
	get("quota share list", "listquotashares", map[string]any{"jobQueue": queueName})
	for _, sh := range walkthroughShares {
		get("quota share "+sh.name, "describequotashare", map[string]any{"quotaShareArn": shareArn(sh.name)})
	}
	for _, j := range jobs {
		get("job "+j, "describeservicejob", map[string]any{"jobId": j})
	}
	for _, st := range []string{"RUNNABLE", "RUNNING", "SUCCEEDED", "FAILED"} {
		get("jobs "+st, "listservicejobs", map[string]any{"jobQueue": queueName, "jobStatus": st})
	}
	get("snapshot", "getjobqueuesnapshot", map[string]any{"jobQueue": queueName})
	tags, err := s.client().ListTagsForResource(ctx(t), &batch.ListTagsForResourceInput{ResourceArn: aws.String(shareArn("QS1"))})
	fatalIf(t, "ListTagsForResource", err)
	out["tags of QS1"] = tags.Tags
	return out
}

// stripKey removes a key at every depth of a decoded JSON document.
func stripKey(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			if k != key {
				m[k] = stripKey(x, key)
			}
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = stripKey(x, key)
		}
		return l
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SIGKILL while 8 clients submit as fast as they can: after a restart on
// the same data dir every acknowledged job exists, and no job was
// dispatched twice.
func TestRestartKill9(t *testing.T) {
	t.Parallel()
	restartUnderLoad(t, "killed", (*server).kill)
}

// The same with SIGTERM: the server stops cleanly (status 0) although
// clients keep submitting, and loses nothing it acknowledged.
func TestRestartStopUnderLoad(t *testing.T) {
	t.Parallel()
	restartUnderLoad(t, "stopped", (*server).stop)
}

// restartUnderLoad stops the server with stop while 8 clients submit jobs
// as fast as they can, restarts it on the same data dir and checks that
// every acknowledged job exists and that none was dispatched twice.
func restartUnderLoad(t *testing.T, stopped string, stop func(*server)) {
	t.Helper()
	const capacity = 3
	s := startServer(t, serverOptions{})
	c := s.client()
	setUpOneShare(t, c, capacity)

	var (
		mu      sync.Mutex
		acked   []string // jobs answered 200
		maxUsed atomic.Int64
		failed  atomic.Int64 // submissions that got an error
	)
	// watch records the largest capacity in use the snapshot shows.
	watch := func(s *server, stop <-chan struct{}, wg *sync.WaitGroup) {
		defer wg.Done()
		c := s.client()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond): // a sample every 20 ms while the clients submit
			}
			snap, err := c.GetJobQueueSnapshot(ctx(t), &batch.GetJobQueueSnapshotInput{JobQueue: aws.String(queueName)})
			if err == nil {
				n := int64(totalUsage(snap))
				for cur := maxUsed.Load(); n > cur && !maxUsed.CompareAndSwap(cur, n); cur = maxUsed.Load() {
				}
			}
		}
	}

	stopWatch := make(chan struct{})
	var watchers sync.WaitGroup
	watchers.Add(1)
	go watch(s, stopWatch, &watchers)
	var submitters sync.WaitGroup
	var killed atomic.Bool
	stopSubmitting := make(chan struct{})
	start := time.Now()
	// Each client retries a failed submission with the same clientToken,
	// as the SDKs do; pending holds the one each had not got through when
	// submitting stopped.
	load := func(g, i int) *batch.SubmitServiceJobInput {
		name := fmt.Sprintf("load-%d-%d", g, i)
		in := submitInput(jobSpec{name: name, share: "team", priority: 1})
		in.ClientToken = aws.String(name)
		return in
	}
	pending := make([]*batch.SubmitServiceJobInput, 8)
	for g := range 8 {
		submitters.Add(1)
		go func() {
			defer submitters.Done()
			for i := 0; ; {
				in := load(g, i)
				select {
				case <-stopSubmitting:
					return
				default:
				}
				out, err := c.SubmitServiceJob(ctx(t), in)
				if err != nil {
					if !killed.Load() {
						t.Errorf("SubmitServiceJob failed before the server was %s: %v", stopped, err)
					}
					failed.Add(1)
					pending[g] = in
					continue
				}
				pending[g] = nil
				mu.Lock()
				acked = append(acked, aws.ToString(out.JobId))
				mu.Unlock()
				i++
			}
		}()
	}
	// Stop the server a second into the stream, once it is well under way;
	// the clients go on for another second against the dead server.
	testwait.Until(t, 30*time.Second, func() error {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n < 20 || time.Since(start) < time.Second {
			return notYet("%d jobs acknowledged after %v", n, time.Since(start))
		}
		return nil
	})
	killed.Store(true)
	stop(s)
	time.Sleep(time.Second) // the clients keep submitting to the dead server
	close(stopSubmitting)
	submitters.Wait()
	close(stopWatch)
	watchers.Wait()
	if failed.Load() == 0 {
		t.Fatalf("no submission failed after the server was %s: it was not %s while clients were submitting", stopped, stopped)
	}
	t.Logf("%d jobs acknowledged, %d submissions failed", len(acked), failed.Load())

	s = startServer(t, serverOptions{dataDir: s.dataDir})
	c = s.client()
	stopWatch = make(chan struct{})
	watchers.Add(1)
	go watch(s, stopWatch, &watchers)

	// Every acknowledged job is there. The clients' retries of the
	// submissions the stop cut off succeed, and create no second job of
	// one whose answer was lost.
	describeAll(t, c, acked)
	for _, in := range pending {
		if in == nil {
			continue
		}
		out, err := c.SubmitServiceJob(ctx(t), in)
		fatalIf(t, "SubmitServiceJob retried after the restart", err)
		acked = append(acked, aws.ToString(out.JobId))
	}
	all := listAllJobs(t, c)
	for _, id := range acked {
		if _, ok := all[id]; !ok {
			t.Errorf("acknowledged job %s is not listed under any status", id)
		}
	}
	byName := map[string][]string{}
	for id, d := range all {
		byName[aws.ToString(d.JobName)] = append(byName[aws.ToString(d.JobName)], id)
	}
	for name, ids := range byName {
		if len(ids) > 1 {
			t.Errorf("submission %s (one clientToken) made %d jobs: %v", name, len(ids), ids)
		}
	}
	dispatched := 0
	for id, d := range all {
		if n := len(d.Attempts); n > 1 || n > 0 && !dispatchedStatus(d.Status) {
			t.Errorf("job %s is %s with %d attempts; jobs that never end and are never preempted have at most one", id, d.Status, n)
		}
		if dispatchedStatus(d.Status) {
			dispatched++
		}
	}
	if want := min(capacity, len(all)); dispatched != want {
		t.Errorf("%d of %d jobs are dispatched after the restart, want %d", dispatched, len(all), want)
	}
	if got := totalUsage(snapshot(t, c)); got != float64(min(capacity, len(all))) {
		t.Errorf("snapshot totalCapacityUsage %v after the restart, want %d", got, min(capacity, len(all)))
	}

	// Scheduling goes on: a running job ends, and exactly one waiting job
	// takes its place.
	var victim string
	for id, d := range all {
		if d.Status == types.ServiceJobStatusRunning {
			victim = id
			break
		}
	}
	if victim != "" && len(all) > capacity {
		terminate(t, c, victim, "make room")
		testwait.Until(t, 10*time.Second, func() error {
			if got := totalUsage(snapshot(t, c)); got != capacity {
				return notYet("the queue uses %v instances, want %d again", got, capacity)
			}
			return nil
		})
	}
	close(stopWatch)
	watchers.Wait()
	if m := maxUsed.Load(); m > capacity {
		t.Errorf("a snapshot showed %d instances in use, more than the service environment's %d", m, capacity)
	}
	s.stop()
}

// setUpOneShare creates the walkthrough's policy, a service environment of
// capacity ml.g5.xlarge and the queue with one RESERVE share, "team",
// that owns it all and never preempts.
func setUpOneShare(t *testing.T, c *batch.Client, capacity int32) {
	t.Helper()
	_, err := c.CreateSchedulingPolicy(ctx(t), &batch.CreateSchedulingPolicyInput{Name: aws.String(policyName),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo}})
	fatalIf(t, "CreateSchedulingPolicy", err)
	_, err = c.CreateServiceEnvironment(ctx(t), &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String(envName),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining,
		CapacityLimits:         []types.CapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(capacity)}}})
	fatalIf(t, "CreateServiceEnvironment", err)
	_, err = c.CreateJobQueue(ctx(t), &batch.CreateJobQueueInput{JobQueueName: aws.String(queueName), Priority: aws.Int32(1),
		JobQueueType: types.JobQueueTypeSagemakerTraining, SchedulingPolicyArn: aws.String(policyArn),
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String(envName)}}})
	fatalIf(t, "CreateJobQueue", err)
	_, err = c.CreateQuotaShare(ctx(t), &batch.CreateQuotaShareInput{QuotaShareName: aws.String("team"), JobQueue: aws.String(queueName),
		CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(capacity)}},
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyReserve},
		PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionStateDisabled}})
	fatalIf(t, "CreateQuotaShare", err)
}

// listAllJobs lists every job of the queue in every status and describes
// each, by job ID.
func listAllJobs(t *testing.T, c *batch.Client) map[string]*batch.DescribeServiceJobOutput {
	t.Helper()
	var ids []string
	for _, st := range types.ServiceJobStatus("").Values() {
		p := batch.NewListServiceJobsPaginator(c, &batch.ListServiceJobsInput{JobQueue: aws.String(queueName), JobStatus: st})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx(t))
			fatalIf(t, "ListServiceJobs "+string(st), err)
			for _, j := range page.JobSummaryList {
				if j.Status != st {
					t.Errorf("ListServiceJobs jobStatus=%s listed job %s, which is %s", st, aws.ToString(j.JobId), j.Status)
				}
				ids = append(ids, aws.ToString(j.JobId))
			}
		}
	}
	return describeAll(t, c, ids)
}

// describeAll describes the jobs, 8 at a time, and fails the test if one
// does not exist.
func describeAll(t *testing.T, c *batch.Client, ids []string) map[string]*batch.DescribeServiceJobOutput {
	t.Helper()
	out := make(map[string]*batch.DescribeServiceJobOutput, len(ids))
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				d, err := c.DescribeServiceJob(ctx(t), &batch.DescribeServiceJobInput{JobId: aws.String(id)})
				if err != nil {
					t.Errorf("DescribeServiceJob %s: %v", id, err)
					continue
				}
				mu.Lock()
				if _, dup := out[id]; dup {
					t.Errorf("job %s is listed twice", id)
				}
				out[id] = d
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	return out
}

func dispatchedStatus(s types.ServiceJobStatus) bool {
	return s == types.ServiceJobStatusScheduled || s == types.ServiceJobStatusStarting || s == types.ServiceJobStatusRunning
}

// timeLimitAction terminates jobs that wait with a quota-limit
// misconfiguration for longer than secs.
func timeLimitAction(secs int32) types.JobStateTimeLimitAction {
	return types.JobStateTimeLimitAction{Action: types.JobStateTimeLimitActionsActionTerminate, MaxTimeSeconds: aws.Int32(secs),
		Reason: aws.String("MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"), State: types.JobStateTimeLimitActionsStateRunnable}
}
