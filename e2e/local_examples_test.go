package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// examples/announcement.sh runs as documented against a fresh server with
// the local executor: its job runs the command and succeeds, the raised
// priority preempts, and it leaves no job running.
func TestLocalAnnouncementExample(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "10s")
	out := runScript(t, 8*time.Minute, "../examples/announcement.sh", s.url)
	for _, want := range []string{
		"QS1\tLEND_AND_BORROW\tVALID\tENABLED", "QS3\tRESERVE\tVALID\tENABLED",
		"train: SUCCEEDED (Training job completed)",
		"qs1_job_high RUNNING qs1_job_low RUNNABLE qs1_job_med RUNNING",
		"qs1_job_high RUNNING qs1_job_low RUNNING qs1_job_med RUNNABLE",
		"qs1_job_high FAILED qs1_job_low FAILED qs1_job_med FAILED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("examples/announcement.sh printed no line with %q; its output:\n%s", want, out)
		}
	}

	c := s.client()
	list, err := c.ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName),
		Filters: []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{"*"}}}})
	fatalIf(t, "ListServiceJobs", err)
	jobs := map[string]types.ServiceJobSummary{}
	for _, j := range list.JobSummaryList {
		jobs[aws.ToString(j.JobName)] = j
	}
	if len(jobs) != 4 {
		t.Fatalf("the example left jobs %s, want train and qs1_job_{high,med,low}", js(list.JobSummaryList))
	}
	train := describe(t, c, aws.ToString(jobs["train"].JobArn))
	if log := s.attemptLog(t, attemptID(t, train.LatestAttempt.ServiceResourceId), "stdout"); log != "epoch 1 on algo-1\nepoch 2 on algo-1\nepoch 3 on algo-1\n" {
		t.Errorf("train printed %q, want three epochs on algo-1 (its command, with SM_HP_EPOCHS and SM_CURRENT_HOST)", log)
	}
	low := describe(t, c, aws.ToString(jobs["qs1_job_low"].JobArn))
	med := describe(t, c, aws.ToString(jobs["qs1_job_med"].JobArn))
	if aws.ToInt32(low.SchedulingPriority) != 4 || len(low.Attempts) != 1 || preempted(med) != 1 {
		t.Errorf("qs1_job_low has priority %d and %d attempts, qs1_job_med was preempted %d times; want 4, 1 and 1",
			aws.ToInt32(low.SchedulingPriority), len(low.Attempts), preempted(med))
	}
	for name, j := range jobs {
		if name != "train" && (j.Status != types.ServiceJobStatusFailed || aws.ToString(j.StatusReason) != "example over") {
			t.Errorf("after the example %s is %s (%q), want FAILED (\"example over\")", name, j.Status, aws.ToString(j.StatusReason))
		}
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}
