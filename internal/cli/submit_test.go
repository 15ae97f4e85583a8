package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// trainingPayload is the part of the submitted payload the tests check.
type trainingPayload struct {
	TrainingJobName        string
	AlgorithmSpecification struct{ ContainerEntrypoint, ContainerArguments []string }
	ResourceConfig         struct {
		InstanceType  string
		InstanceCount int
	}
	Environment map[string]string
}

func (s *server) job(id string) (record.Job, trainingPayload) {
	s.t.Helper()
	j, err := s.eng.DescribeServiceJob(s.t.Context(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	var p trainingPayload
	if err := json.Unmarshal([]byte(j.ServiceRequestPayload), &p); err != nil {
		s.t.Fatal(err)
	}
	return j, p
}

// Ensure submit turns flags and a command into the job's settings and a
// CreateTrainingJob payload the local executor runs.
func TestSubmitFlags(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	out := s.ok(Submit, "--share", "QS1", "--priority", "5", "--retries", "2", "--timeout", "2h", "--preemption-retries", "3",
		"--count", "2", "--env", "LR=0.1", "--env", "SHARQ_SIMULATED_RUNTIME_MS=10",
		"--", "python", "train.py", "--epochs", "3")
	golden(t, "submit", out)
	j, p := s.job(jobID(1))
	if j.JobName != "train" || j.QuotaShareName != "QS1" || j.SchedulingPriority != 5 {
		t.Errorf("job %s in %s, priority %d", j.JobName, j.QuotaShareName, j.SchedulingPriority)
	}
	if j.RetryStrategy == nil || j.RetryStrategy.Attempts != 3 {
		t.Errorf("retry strategy %+v, want 3 attempts", j.RetryStrategy)
	}
	if j.TimeoutConfig == nil || j.TimeoutConfig.AttemptDurationSeconds != 7200 {
		t.Errorf("timeout %+v", j.TimeoutConfig)
	}
	if pc := j.PreemptionConfiguration; pc == nil || pc.PreemptionRetriesBeforeTermination == nil || *pc.PreemptionRetriesBeforeTermination != 3 {
		t.Errorf("preemption configuration %+v", pc)
	}
	spec := p.AlgorithmSpecification
	if strings.Join(spec.ContainerEntrypoint, " ") != "python" || strings.Join(spec.ContainerArguments, " ") != "train.py --epochs 3" {
		t.Errorf("command %v %v", spec.ContainerEntrypoint, spec.ContainerArguments)
	}
	// The queue's environment has one instance type, so it is the default.
	if p.ResourceConfig.InstanceType != "ml.g5.xlarge" || p.ResourceConfig.InstanceCount != 2 || p.Environment["LR"] != "0.1" {
		t.Errorf("payload %+v", p)
	}
}

// Ensure a payload file is submitted as written, with flags overriding it,
// and that -q and -o json give scripts the job ID.
func TestSubmitPayload(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	file := filepath.Join(t.TempDir(), "job.json")
	os.WriteFile(file, []byte(`{"TrainingJobName":"resnet","RoleArn":"arn:aws:iam::123456789012:role/sm",
		"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"VolumeSizeInGB":30},
		"AlgorithmSpecification":{"TrainingImage":"img","TrainingInputMode":"File"},"Environment":{"A":"1"}}`), 0o644)
	id := strings.TrimSpace(s.ok(Submit, "--payload", file, "--share", "QS2", "--count", "3", "--env", "B=2", "-q"))
	if id != jobID(1) {
		t.Fatalf("-q printed %q", id)
	}
	j, p := s.job(id)
	if j.JobName != "resnet" || p.ResourceConfig.InstanceCount != 3 || p.Environment["A"] != "1" || p.Environment["B"] != "2" {
		t.Errorf("job %s, payload %+v", j.JobName, p)
	}
	// What sharq does not read is submitted as written.
	want := `{"AlgorithmSpecification":{"TrainingImage":"img","TrainingInputMode":"File"},"Environment":{"A":"1","B":"2"},` +
		`"ResourceConfig":{"InstanceCount":3,"InstanceType":"ml.g5.xlarge","VolumeSizeInGB":30},` +
		`"RoleArn":"arn:aws:iam::123456789012:role/sm","TrainingJobName":"resnet"}`
	if j.ServiceRequestPayload != want {
		t.Errorf("payload\n%s\nwant\n%s", j.ServiceRequestPayload, want)
	}
	var out struct{ JobID, JobName, JobArn string }
	if err := json.Unmarshal([]byte(s.ok(Submit, "--payload", file, "--share", "QS2", "-o", "json")), &out); err != nil {
		t.Fatal(err)
	}
	if out.JobID != jobID(2) || out.JobName != "resnet" || !strings.HasSuffix(out.JobArn, "service-job/"+jobID(2)) {
		t.Errorf("-o json: %+v", out)
	}
}

// Ensure a refused submit says why in one line, with the exit code scripts
// can tell apart.
func TestSubmitRefused(t *testing.T) {
	s := newServer(t, false)
	expect(t, s.run(Submit, "--", "train"), ExitUsage, "the server has no job queue")
	s.ok(Apply, "-f", announcement)

	oneLine := func(r result, code int, msg string) {
		t.Helper()
		expect(t, r, code, msg)
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("stderr is not one line: %q", r.stderr)
		}
	}
	oneLine(s.run(Submit, "--share", "QS9", "--", "train"), ExitNotFound,
		"sharq submit: Quota share QS9 does not exist in job queue my-sm-training-qm-jq")
	oneLine(s.run(Submit, "--", "train"), ExitFailure, "quotaShareName")
	oneLine(s.run(Submit, "--share", "QS1", "--instance-type", "gpu", "--", "train"), ExitFailure, `"gpu" is not a SageMaker Training instance type`)
	qs3 := s.share("my-sm-training-qm-jq", "QS3")
	if _, err := s.eng.UpdateQuotaShare(t.Context(), batchmodel.UpdateQuotaShareInput{QuotaShareArn: qs3.QuotaShareArn, State: "DISABLED"}); err != nil {
		t.Fatal(err)
	}
	oneLine(s.run(Submit, "--share", "QS3", "--", "train"), ExitFailure, "Quota share QS3 is DISABLED and does not accept jobs")

	expect(t, s.run(Submit, "--share", "QS1"), ExitUsage, "give --payload FILE or -- COMMAND")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"Environment":{"A":1}}`), 0o644)
	expect(t, s.run(Submit, "--share", "QS1", "--payload", bad), ExitUsage,
		bad+" is not a JSON CreateTrainingJob request: each value of Environment must be a string, not a number")
	os.WriteFile(bad, []byte(`{"Environment":`), 0o644)
	expect(t, s.run(Submit, "--share", "QS1", "--payload", bad), ExitUsage,
		bad+" is not a JSON CreateTrainingJob request: unexpected end of JSON input")
	// The server refuses a member CreateTrainingJob does not define, and
	// Pipe mode, for a submission and its dry run alike.
	os.WriteFile(bad, []byte(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},"StoppingCondition":{"MaxRuntime":60}}`), 0o644)
	for _, args := range [][]string{{"--share", "QS1", "--payload", bad}, {"--dry-run", "--share", "QS1", "--payload", bad}} {
		oneLine(s.run(Submit, args...), ExitFailure,
			`serviceRequestPayload: unknown field "StoppingCondition.MaxRuntime" (CreateTrainingJob has no such field; did you mean "MaxRuntimeInSeconds"?)`)
	}
	os.WriteFile(bad, []byte(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"},"InputDataConfig":[{"ChannelName":"train","InputMode":"Pipe"}]}`), 0o644)
	oneLine(s.run(Submit, "--share", "QS1", "--payload", bad), ExitFailure,
		"serviceRequestPayload: InputDataConfig[0].InputMode is Pipe, which sharq does not support; use File or FastFile")
	expect(t, s.run(Submit, "--env", "NOVALUE", "--", "train"), ExitUsage, "want KEY=VALUE")
	expect(t, s.run(Submit, "--retries", "10", "--share", "QS1", "--", "train"), ExitUsage, "--retries must be 0 to 9")
	expect(t, s.run(Submit, "--queue", "nope", "--share", "QS1", "--", "train"), ExitNotFound, "nope does not exist")
}

// Ensure --dry-run answers what would happen, matching what the real
// submission then does, and changes nothing.
func TestSubmitDryRun(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--priority", "3", "--name", "high", "--", "train")
	s.ok(Submit, "--share", "QS1", "--priority", "2", "--name", "med", "--", "train")
	s.waitStatus(jobID(2), "RUNNING")
	got := s.ok(Submit, "--dry-run", "--share", "QS2", "--name", "q2", "--", "train")
	want := "would be dispatched now (reclaim), own 1 × ml.g5.xlarge\n  would preempt med (QS1, priority 2, cross-share): requeued\n"
	if got != want {
		t.Errorf("dry-run printed %q, want %q", got, want)
	}
	if got := s.ok(Submit, "--dry-run", "--share", "QS1", "--name", "low", "--", "train"); !strings.HasPrefix(got, "would wait at position 1: QS1 at its limit") {
		t.Errorf("dry-run of a waiting job printed %q", got)
	}
	s.ok(Submit, "--share", "QS2", "--name", "q2", "--", "train")
	s.waitStatus(jobID(3), "RUNNING")
	s.waitStatus(jobID(2), "RUNNABLE")
}
