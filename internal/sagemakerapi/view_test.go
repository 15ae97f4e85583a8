package sagemakerapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/record"
)

const tjArn = "arn:aws:sagemaker:us-east-1:000000000000:training-job/"

func attempt(name string, started, stopped int64, reason string) record.Attempt {
	return record.Attempt{ServiceResourceID: record.ServiceResourceID{Name: "TrainingJobArn", Value: tjArn + name},
		StartedAt: started, StoppedAt: stopped, StatusReason: reason}
}

func hist(pairs ...any) []record.Transition {
	var out []record.Transition
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, record.Transition{At: int64(pairs[i].(int)), Status: pairs[i+1].(string)})
	}
	return out
}

// Ensure each attempt of a job reads as SageMaker would show its training
// job: status, secondary status, reason, times and transitions.
func TestViewOf(t *testing.T) {
	payload := `{"OutputDataConfig":{"S3OutputPath":"s3://bucket/out"},"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2}}`
	retried := record.Job{Status: record.StatusRunning, ServiceRequestPayload: payload, CreatedAt: 500,
		History:  hist(500, "SUBMITTED", 600, "RUNNABLE", 1000, "SCHEDULED", 1100, "STARTING", 1200, "RUNNING", 1300, "RUNNABLE", 2000, "SCHEDULED", 2100, "RUNNING"),
		Attempts: []record.Attempt{attempt("a1", 1200, 1300, "Preempted: in-share preemption (higher priority job x)"), attempt("a2", 2100, 0, "")}}
	for name, tc := range map[string]struct {
		job   record.Job
		name  string
		want  View
		model string
	}{
		"Preempted": {retried, "a1", View{Status: Stopped, Secondary: Stopped, Created: 1000, Started: 1200, End: 1300, Modified: 1300,
			Transitions: []Transition{{"Pending", 1000, 1100, transitionMessages["Pending"]}, {"Downloading", 1100, 1200, transitionMessages["Downloading"]},
				{"Training", 1200, 1300, transitionMessages["Training"]}, {Stopped, 1300, 0, "Preempted: in-share preemption (higher priority job x)"}}}, ""},
		"Running": {retried, "a2", View{Live: true, Status: InProgress, Secondary: "Training", Created: 2000, Started: 2100, Modified: 2100,
			Transitions: []Transition{{"Pending", 2000, 2100, transitionMessages["Pending"]}, {"Training", 2100, 0, transitionMessages["Training"]}}}, ""},
		"Uploading": {record.Job{Status: record.StatusRunning, StatusReason: "Uploading the model to s3://bucket/out/u/output/model.tar.gz",
			History: hist(10, "SCHEDULED", 20, "RUNNING"), Attempts: []record.Attempt{attempt("u", 20, 0, "")}}, "u",
			View{Live: true, Status: InProgress, Secondary: "Uploading", Created: 10, Started: 20, Modified: 20,
				Transitions: []Transition{{"Pending", 10, 20, transitionMessages["Pending"]}, {"Training", 20, 0, transitionMessages["Training"]}}}, ""},
		"Completed": {record.Job{Status: record.StatusSucceeded, ServiceRequestPayload: payload, History: hist(10, "SCHEDULED", 20, "RUNNING", 30, "SUCCEEDED"),
			Attempts: []record.Attempt{attempt("c", 20, 30, completedReason)}}, "c",
			View{Status: Completed, Secondary: Completed, Created: 10, Started: 20, End: 30, Modified: 30,
				Transitions: []Transition{{"Pending", 10, 20, transitionMessages["Pending"]}, {"Training", 20, 30, transitionMessages["Training"]},
					{Completed, 30, 0, "Training job completed"}}}, "s3://bucket/out/c/output/model.tar.gz"},
		"Failed": {record.Job{Status: record.StatusFailed, History: hist(10, "SCHEDULED", 30, "FAILED"),
			Attempts: []record.Attempt{attempt("f", 0, 30, "exit code 3: bad data")}}, "f",
			View{Status: Failed, Secondary: Failed, FailureReason: "exit code 3: bad data", Created: 10, End: 30, Modified: 30,
				Transitions: []Transition{{"Pending", 10, 30, transitionMessages["Pending"]}, {Failed, 30, 0, "exit code 3: bad data"}}}, ""},
		"Terminated": {record.Job{Status: record.StatusFailed, IsTerminated: true, CreatedAt: 5, Attempts: []record.Attempt{attempt("s", 20, 30, StopReason)}}, "s",
			View{Status: Stopped, Secondary: Stopped, Created: 5, Started: 20, End: 30, Modified: 30,
				Transitions: []Transition{{Stopped, 30, 0, StopReason}}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			v, ok := ViewOf(tc.job, tc.name)
			if !ok {
				t.Fatalf("no attempt %s", tc.name)
			}
			tc.want.Name, tc.want.Arn, tc.want.Job = tc.name, tjArn+tc.name, tc.job
			if diff := cmp.Diff(tc.want, v); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if got := v.ModelArtifacts(); got != tc.model {
				t.Errorf("ModelArtifacts %q, want %q", got, tc.model)
			}
		})
	}
	if _, ok := ViewOf(retried, "a3"); ok {
		t.Errorf("ViewOf found an attempt the job does not have")
	}
	v, _ := ViewOf(retried, "a2")
	if got := []string{v.LogStream("algo-1"), v.Hosts()[1]}; !cmp.Equal(got, []string{"a2/algo-1-2", "algo-2"}) {
		t.Errorf("stream and hosts: %v", got)
	}
}
