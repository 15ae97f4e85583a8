package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
)

// Ensure a submission whose payload has a member CreateTrainingJob does
// not define, or asks for Pipe mode, is refused as invalid, naming it,
// by SubmitServiceJob and by its dry run alike, and makes no job.
func TestSubmitRefusesPayloadCreateTrainingJobWould(t *testing.T) {
	h := startEngine(t, t.TempDir())
	h.setupWalkthrough()
	ctx := context.Background()
	good := payload("ml.g5.xlarge", 1, map[string]string{"InstanceTyp": "a user's name"})
	for _, tc := range []struct{ name, payload, want string }{
		{"misspelled", strings.Replace(good, `"InstanceType"`, `"InstanceTyp"`, 1),
			`serviceRequestPayload: unknown field "ResourceConfig.InstanceTyp" (CreateTrainingJob has no such field; did you mean "InstanceType"?)`},
		{"pipe", strings.Replace(good, `{`, `{"AlgorithmSpecification":{"TrainingInputMode":"Pipe"},`, 1),
			"serviceRequestPayload: AlgorithmSpecification.TrainingInputMode is Pipe, which sharq does not support; use File or FastFile"},
	} {
		in := engine.SubmitServiceJobInput{JobName: "refused-" + tc.name, JobQueue: "my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: tc.payload, QuotaShareName: "QS1"}
		_, err := h.e.SubmitServiceJob(ctx, in)
		if engine.ErrorCode(err) != engine.Invalid || engine.ErrorMessage(err) != tc.want {
			t.Errorf("SubmitServiceJob(%s) = %v, want invalid %q", tc.name, err, tc.want)
		}
		_, err = h.e.DryRunSubmit(ctx, in)
		if engine.ErrorCode(err) != engine.Invalid || engine.ErrorMessage(err) != tc.want {
			t.Errorf("DryRunSubmit(%s) = %v, want invalid %q", tc.name, err, tc.want)
		}
	}
	// The map's names are the user's: the same payload, spelt right, runs.
	j, err := h.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "accepted", JobQueue: "my-sm-training-qm-jq",
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: good, QuotaShareName: "QS1"})
	if err != nil {
		t.Fatal(err)
	}
	h.waitStatus(j.JobID, "RUNNING")
	jobs, _, err := h.e.ListServiceJobs(ctx, engine.ListServiceJobsInput{JobQueue: "my-sm-training-qm-jq",
		Filters: []engine.JobFilter{{Name: "JOB_NAME", Values: []string{"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].JobName != "accepted" {
		t.Errorf("jobs %+v, want only the accepted one", jobs)
	}
}
