package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func fullJob() *Job {
	attempt := Attempt{ServiceResourceID: ServiceResourceID{Name: "TrainingJobArn", Value: "arn:tj"}, StartedAt: 3, StoppedAt: 4, StatusReason: "preempted"}
	return &Job{
		JobID: "id", JobName: "n", JobArn: "arn:j", JobQueue: "arn:q", ServiceJobType: "SAGEMAKER_TRAINING",
		SchedulingPriority: 7, QuotaShareName: "QS1", ShareIdentifier: "s", ServiceRequestPayload: `{"a":1}`,
		RetryStrategy:           &RetryStrategy{Attempts: 2, EvaluateOnExit: []EvaluateOnExit{{Action: "RETRY", OnStatusReason: "x*"}}},
		TimeoutConfig:           &TimeoutConfig{AttemptDurationSeconds: 60},
		PreemptionConfiguration: &JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: ptr(3)},
		Tags:                    map[string]string{"team": "a"},
		CapacityUsage:           []CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 2}},
		ClientToken:             "tok", RequestHash: "h",
		Status: StatusRunnable, StatusReason: "r", CreatedAt: 1, ScheduledAt: 2, StartedAt: 3, StoppedAt: 4, EndedAt: 5,
		IsTerminated: true, Attempts: []Attempt{attempt},
		LatestAttempt:     &LatestAttempt{ServiceResourceID: attempt.ServiceResourceID},
		PreemptionSummary: &PreemptionSummary{PreemptedAttemptCount: 1, RecentPreemptedAttempts: []Attempt{attempt}},
		History:           []Transition{{At: 1, Status: StatusSubmitted}, {At: 2, Status: StatusRunnable, Reason: "r"}},
		Queue:             "q", QueuedAt: 1e6, Demand: []UnitCount{{Unit: "ml.g5.xlarge", Count: 2}}, Entries: 2,
		AttemptID: "att", AttemptSeq: 2, DispatchedAt: 2e6, WaitFor: []string{"other"}, WaitSince: 9,
	}
}

// Every field of every record survives a write and a read.
func TestRoundTrip(t *testing.T) {
	j := fullJob()
	got, err := DecodeJob(Encode(j))
	if err != nil || !cmp.Equal(j, got) {
		t.Errorf("job: %v %s", err, cmp.Diff(j, got))
	}
	p := &SchedulingPolicy{Arn: "arn:p", Name: "p", QuotaSharePolicy: &QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"},
		FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":1}`), Tags: map[string]string{"a": "b"}}
	if got, err := DecodeSchedulingPolicy(Encode(p)); err != nil || !cmp.Equal(p, got) {
		t.Errorf("policy: %v %s", err, cmp.Diff(p, got))
	}
	se := &ServiceEnvironment{ServiceEnvironmentName: "se", ServiceEnvironmentArn: "arn:se", ServiceEnvironmentType: "SAGEMAKER_TRAINING",
		State: "ENABLED", Status: "VALID", CapacityLimits: []CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 3}}, Tags: map[string]string{"a": "b"}}
	if got, err := DecodeServiceEnvironment(Encode(se)); err != nil || !cmp.Equal(se, got) {
		t.Errorf("environment: %v %s", err, cmp.Diff(se, got))
	}
	q := &JobQueue{JobQueueName: "q", JobQueueArn: "arn:q", State: "ENABLED", SchedulingPolicyArn: "arn:p", Status: "VALID",
		StatusReason: "ok", Priority: 2, ComputeEnvironmentOrder: []json.RawMessage{json.RawMessage(`{"order":1}`)},
		ServiceEnvironmentOrder: []ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "arn:se"}}, JobQueueType: "SAGEMAKER_TRAINING",
		Tags: map[string]string{"a": "b"}, JobStateTimeLimitActions: []JobStateTimeLimitAction{{Action: "CANCEL", MaxTimeSeconds: 600, Reason: "r", State: "RUNNABLE"}}}
	if got, err := DecodeJobQueue(Encode(q)); err != nil || !cmp.Equal(q, got) {
		t.Errorf("queue: %v %s", err, cmp.Diff(q, got))
	}
	s := &QuotaShare{QuotaShareName: "QS1", QuotaShareArn: "arn:s", JobQueueArn: "arn:q", CapacityLimits: []CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
		ResourceSharingConfiguration: ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: ptr(200)},
		PreemptionConfiguration:      QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"}, State: "ENABLED", Status: "VALID", Tags: map[string]string{"a": "b"}}
	if got, err := DecodeQuotaShare(Encode(s)); err != nil || !cmp.Equal(s, got) {
		t.Errorf("share: %v %s", err, cmp.Diff(s, got))
	}
}

func TestEncodeCarriesTheFormat(t *testing.T) {
	if b := Encode(&Job{}); !bytes.HasPrefix(b, []byte(`{"v":1,`)) {
		t.Errorf("Encode = %s", b)
	}
}

// Encode writes the format's key, then the record's members as
// encoding/json writes them (HTML-escaped, as json.Marshal does).
func TestEncodeIsTheFormatThenJSON(t *testing.T) {
	j := fullJob()
	j.ServiceRequestPayload = `{"TrainingJobName":"a<b>&c","Environment":{"K":"\u2028\n"}}`
	j.Tags["x"] = "\xff"
	for _, r := range []Record{j, &Job{}, &QuotaShare{}, &SchedulingPolicy{Name: "p"}} {
		m, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(Encode(r)), `{"v":1,`+string(m[1:]); got != want {
			t.Errorf("Encode(%T) =\n%s\nwant\n%s", r, got, want)
		}
	}
}

// A record of a later format is refused, not misread.
func TestNewerFormatRefused(t *testing.T) {
	_, err := DecodeJob([]byte(`{"v":2,"id":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "record format 2 is newer") {
		t.Errorf("err = %v", err)
	}
}

// Documents of the first release, as its database holds them.
const (
	jobV0Doc    = `{"jobId":"01a2343f-087f-749b-8f1c-41722ea7bc20","jobName":"done","jobArn":"arn:aws:batch:us-east-1:000000000000:service-job/01a2343f-087f-749b-8f1c-41722ea7bc20","jobQueue":"arn:aws:batch:us-east-1:000000000000:job-queue/my-sm-training-qm-jq","serviceJobType":"SAGEMAKER_TRAINING","status":"SUCCEEDED","statusReason":"Training job completed","createdAt":1793534401000,"scheduledAt":1793534401000,"startedAt":0,"stoppedAt":1793534461000,"schedulingPriority":1,"quotaShareName":"QS1","serviceRequestPayload":"{\"ResourceConfig\":{\"InstanceType\":\"ml.g5.xlarge\",\"InstanceCount\":1}}","retryStrategy":{"attempts":2,"evaluateOnExit":[{"action":"RETRY","onStatusReason":"x*"}]},"timeoutConfig":{"attemptDurationSeconds":60},"preemptionConfiguration":{"preemptionRetriesBeforeTermination":3},"tags":{"team":"a"},"capacityUsage":[{"capacityUnit":"ml.g5.xlarge","quantity":1}],"attempts":[{"serviceResourceId":{"name":"TrainingJobArn","value":"arn:tj"},"stoppedAt":1793534461000,"statusReason":"Training job completed"}],"latestAttempt":{"serviceResourceId":{"name":"TrainingJobArn","value":"arn:tj"}},"preemptionSummary":{"preemptedAttemptCount":1,"recentPreemptedAttempts":[{"serviceResourceId":{"name":"TrainingJobArn","value":"arn:tj0"}}]},"sharq":{"queue":"my-sm-training-qm-jq","queuedAt":1793534401000000000,"demand":[{"Unit":"ml.g5.xlarge","Count":1}],"entries":1,"attemptId":"a1","attemptSeq":1,"dispatchedAt":1793534401000000000,"waitFor":["a0"],"clientToken":"token-done","requestHash":"4e074cd955cff75c","endedAt":1793534461000,"waitSince":5,"history":[{"at":1793534401000,"status":"SUBMITTED"},{"at":1793534461000,"status":"SUCCEEDED","reason":"Training job completed"}]}}`
	queueV0Doc  = `{"jobQueueName":"my-sm-training-qm-jq","jobQueueArn":"arn:q","state":"ENABLED","schedulingPolicyArn":"arn:p","status":"VALID","statusReason":"JobQueue Healthy","priority":1,"computeEnvironmentOrder":[],"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"arn:se"}],"jobQueueType":"SAGEMAKER_TRAINING","tags":{},"jobStateTimeLimitActions":[{"action":"CANCEL","maxTimeSeconds":600,"reason":"r","state":"RUNNABLE"}]}`
	shareV0Doc  = `{"quotaShareName":"QS1","quotaShareArn":"arn:s","jobQueueArn":"arn:q","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],"resourceSharingConfiguration":{"strategy":"LEND_AND_BORROW","borrowLimit":200},"preemptionConfiguration":{"inSharePreemption":"ENABLED"},"state":"ENABLED","status":"VALID"}`
	envV0Doc    = `{"serviceEnvironmentName":"se","serviceEnvironmentArn":"arn:se","serviceEnvironmentType":"SAGEMAKER_TRAINING","state":"ENABLED","status":"VALID","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":3}]}`
	policyV0Doc = `{"arn":"arn:p","name":"p","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`
)

func TestDecodeFormat0(t *testing.T) {
	j, err := DecodeJob([]byte(jobV0Doc))
	tj := ServiceResourceID{Name: "TrainingJobArn", Value: "arn:tj"}
	want := &Job{
		JobID: "01a2343f-087f-749b-8f1c-41722ea7bc20", JobName: "done", JobArn: "arn:aws:batch:us-east-1:000000000000:service-job/01a2343f-087f-749b-8f1c-41722ea7bc20",
		JobQueue: "arn:aws:batch:us-east-1:000000000000:job-queue/my-sm-training-qm-jq", ServiceJobType: "SAGEMAKER_TRAINING",
		SchedulingPriority: 1, QuotaShareName: "QS1", ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`,
		RetryStrategy:           &RetryStrategy{Attempts: 2, EvaluateOnExit: []EvaluateOnExit{{Action: "RETRY", OnStatusReason: "x*"}}},
		TimeoutConfig:           &TimeoutConfig{AttemptDurationSeconds: 60},
		PreemptionConfiguration: &JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: ptr(3)},
		Tags:                    map[string]string{"team": "a"}, CapacityUsage: []CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 1}},
		ClientToken: "token-done", RequestHash: "4e074cd955cff75c",
		Status: StatusSucceeded, StatusReason: "Training job completed", CreatedAt: 1793534401000, ScheduledAt: 1793534401000,
		StoppedAt: 1793534461000, EndedAt: 1793534461000,
		Attempts:          []Attempt{{ServiceResourceID: tj, StoppedAt: 1793534461000, StatusReason: "Training job completed"}},
		LatestAttempt:     &LatestAttempt{ServiceResourceID: tj},
		PreemptionSummary: &PreemptionSummary{PreemptedAttemptCount: 1, RecentPreemptedAttempts: []Attempt{{ServiceResourceID: ServiceResourceID{Name: "TrainingJobArn", Value: "arn:tj0"}}}},
		History:           []Transition{{At: 1793534401000, Status: StatusSubmitted}, {At: 1793534461000, Status: StatusSucceeded, Reason: "Training job completed"}},
		Queue:             "my-sm-training-qm-jq", QueuedAt: 1793534401000000000, Demand: []UnitCount{{Unit: "ml.g5.xlarge", Count: 1}},
		Entries: 1, AttemptID: "a1", AttemptSeq: 1, DispatchedAt: 1793534401000000000, WaitFor: []string{"a0"}, WaitSince: 5,
	}
	if err != nil || !cmp.Equal(want, j) {
		t.Errorf("job: %v %s", err, cmp.Diff(want, j))
	}
	q, err := DecodeJobQueue([]byte(queueV0Doc))
	wantQ := &JobQueue{JobQueueName: "my-sm-training-qm-jq", JobQueueArn: "arn:q", State: "ENABLED", SchedulingPolicyArn: "arn:p", Status: "VALID",
		StatusReason: "JobQueue Healthy", Priority: 1, ComputeEnvironmentOrder: []json.RawMessage{},
		ServiceEnvironmentOrder: []ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "arn:se"}}, JobQueueType: "SAGEMAKER_TRAINING",
		Tags: map[string]string{}, JobStateTimeLimitActions: []JobStateTimeLimitAction{{Action: "CANCEL", MaxTimeSeconds: 600, Reason: "r", State: "RUNNABLE"}}}
	if err != nil || !cmp.Equal(wantQ, q) {
		t.Errorf("queue: %v %s", err, cmp.Diff(wantQ, q))
	}
	s, err := DecodeQuotaShare([]byte(shareV0Doc))
	wantS := &QuotaShare{QuotaShareName: "QS1", QuotaShareArn: "arn:s", JobQueueArn: "arn:q", CapacityLimits: []CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
		ResourceSharingConfiguration: ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: ptr(200)},
		PreemptionConfiguration:      QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"}, State: "ENABLED", Status: "VALID"}
	if err != nil || !cmp.Equal(wantS, s) {
		t.Errorf("share: %v %s", err, cmp.Diff(wantS, s))
	}
	se, err := DecodeServiceEnvironment([]byte(envV0Doc))
	wantSE := &ServiceEnvironment{ServiceEnvironmentName: "se", ServiceEnvironmentArn: "arn:se", ServiceEnvironmentType: "SAGEMAKER_TRAINING",
		State: "ENABLED", Status: "VALID", CapacityLimits: []CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 3}}}
	if err != nil || !cmp.Equal(wantSE, se) {
		t.Errorf("environment: %v %s", err, cmp.Diff(wantSE, se))
	}
	p, err := DecodeSchedulingPolicy([]byte(policyV0Doc))
	wantP := &SchedulingPolicy{Arn: "arn:p", Name: "p", QuotaSharePolicy: &QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}}
	if err != nil || !cmp.Equal(wantP, p) {
		t.Errorf("policy: %v %s", err, cmp.Diff(wantP, p))
	}
}
