package sagemakerapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/sharq-dev/sharq/internal/testserver"
)

// Ensure what SageMaker's calls say of a training job follows the texts
// the real engine and executor give its attempt: the fixtures of the other
// tests word them by hand, so a text changed there would pass them.
func TestTrainingJobsOfTheRealEngine(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Config: "../../examples/announcement.yaml"})
	ctx := t.Context()
	bc, sm := s.BatchClient(), s.SageMakerClient()
	submit := func(name string, env map[string]string) string {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"TrainingJobName": name,
			"ResourceConfig": map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10},
			"Environment":    env})
		out, err := bc.SubmitServiceJob(ctx, &batch.SubmitServiceJobInput{JobName: aws.String(name), JobQueue: aws.String("my-sm-training-qm-jq"),
			ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: aws.String("QS1"), SchedulingPriority: aws.Int32(1),
			ServiceRequestPayload: aws.String(string(payload))})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.JobId)
	}
	done := submit("done", map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "1"})
	fails := submit("fails", map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "1", "SHARQ_SIMULATED_EXIT_CODE": "3"})
	s.WaitStatus(t, done, "SUCCEEDED")
	s.WaitStatus(t, fails, "FAILED")
	stopped := submit("stopped", map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "0"})
	s.WaitStatus(t, stopped, "RUNNING")
	if _, err := bc.TerminateServiceJob(ctx, &batch.TerminateServiceJobInput{JobId: aws.String(stopped), Reason: aws.String("enough")}); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(t, stopped, "FAILED")

	for _, tt := range []struct {
		id      string
		status  types.TrainingJobStatus
		failure string
	}{
		{done, types.TrainingJobStatusCompleted, ""},
		{fails, types.TrainingJobStatusFailed, "exit code 3"},
		{stopped, types.TrainingJobStatusStopped, ""},
	} {
		j, err := s.Engine.DescribeServiceJob(ctx, tt.id)
		if err != nil || len(j.Attempts) != 1 {
			t.Fatalf("%s: %+v, %v", tt.id, j, err)
		}
		tjArn := j.Attempts[0].ServiceResourceID.Value
		name := tjArn[strings.LastIndex(tjArn, "/")+1:]
		out, err := sm.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(name)})
		if err != nil {
			t.Fatalf("%s: DescribeTrainingJob: %v", j.JobName, err)
		}
		if out.TrainingJobStatus != tt.status || aws.ToString(out.FailureReason) != tt.failure || aws.ToString(out.TrainingJobArn) != tjArn {
			t.Errorf("%s: %s %s, failure %q; want %s, failure %q", j.JobName, aws.ToString(out.TrainingJobArn), out.TrainingJobStatus,
				aws.ToString(out.FailureReason), tt.status, tt.failure)
		}
		if n := len(out.SecondaryStatusTransitions); n == 0 || out.SecondaryStatusTransitions[n-1].Status != types.SecondaryStatus(tt.status) {
			t.Errorf("%s: transitions %s, want the last one %s", j.JobName, transitions(out.SecondaryStatusTransitions), tt.status)
		}
	}
}

func transitions(ts []types.SecondaryStatusTransition) string {
	var b strings.Builder
	for _, tr := range ts {
		fmt.Fprintf(&b, "[%s: %s]", tr.Status, aws.ToString(tr.StatusMessage))
	}
	return b.String()
}
