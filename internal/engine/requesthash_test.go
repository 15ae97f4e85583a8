package engine

import (
	"testing"

	"github.com/sharq-dev/sharq/internal/record"
)

// A job keeps its submission's hash: a retry of that submission after an
// upgrade must hash the same, so the values here were computed by the
// first release and never change.
func TestRequestHashIsStable(t *testing.T) {
	two, three := 2, 3
	in := SubmitServiceJobInput{JobName: "j", JobQueue: "q", ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: `{"a":1}`,
		ClientToken: "tok", QuotaShareName: "QS1", SchedulingPriority: &two,
		PreemptionConfiguration: &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: &three},
		RetryStrategy:           &record.RetryStrategy{Attempts: 3, EvaluateOnExit: []record.EvaluateOnExit{{Action: "RETRY", OnStatusReason: "x*"}}},
		TimeoutConfig:           &record.TimeoutConfig{AttemptDurationSeconds: 60}, Tags: map[string]string{"b": "1", "a": "2"}}
	for _, c := range []struct {
		in   SubmitServiceJobInput
		want string
	}{{in, "475ef4ffb43cc858"}, {SubmitServiceJobInput{JobQueue: "q"}, "b9a21dcfcc1270b2"}} {
		if got := requestHash(c.in); got != c.want {
			t.Errorf("requestHash(%+v) = %s, want %s", c.in, got, c.want)
		}
	}
}
