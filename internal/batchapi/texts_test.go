package batchapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/executor/executortest"
	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// The texts clients read (statusReason of resources, jobs and attempts,
// and the messages of ClientException) are the engine's. They are checked
// here on the wire against the real engine: the shape tests' fake engine
// answers with fixtures, so a text broken in the engine would pass there.

// Ensure the statusReason of each resource and each way a job waits or
// ends, and the engine's error messages, reach the wire as the engine words
// them.
func TestWireTexts(t *testing.T) {
	srv, c := newEngineServer(t)
	ctx := t.Context()
	setUpTextsQueue(t, srv)

	t.Run("Resources", func(t *testing.T) {
		r := srv.Do(t, "POST", "/v1/describejobqueues", `{"jobQueues":["HQ"]}`)
		if !strings.Contains(r.Body, `"statusReason":"JobQueue Healthy"`) {
			t.Errorf("DescribeJobQueues: %s", r.Body)
		}
		// AWS sends no statusReason for a valid environment or share.
		r = srv.Do(t, "POST", "/v1/describeserviceenvironments", `{"serviceEnvironments":["se"]}`)
		if r.Status != 200 || strings.Contains(r.Body, "statusReason") {
			t.Errorf("DescribeServiceEnvironments: %d %s", r.Status, r.Body)
		}
		r = srv.Do(t, "POST", "/v1/describequotashare", `{"quotaShareArn":"`+testBase.QuotaShare("HQ", "QS1")+`"}`)
		if r.Status != 200 || strings.Contains(r.Body, "statusReason") {
			t.Errorf("DescribeQuotaShare: %d %s", r.Status, r.Body)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		unknownJob := "00000000-0000-0000-0000-000000000000"
		for _, tt := range []struct{ path, body, want string }{
			{"/v1/createschedulingpolicy", `{"name":"sp","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`,
				"Object already exists"}, // the notebook matches this text exactly
			{"/v1/createquotashare", shareBody("QS1"), "Quota share QS1 already exists"},
			{"/v1/describequotashare", `{"quotaShareArn":"` + testBase.QuotaShare("HQ", "QS9") + `"}`,
				"Quota share " + testBase.QuotaShare("HQ", "QS9") + " does not exist"},
			{"/v1/describeservicejob", `{"jobId":"` + unknownJob + `"}`, "Job " + unknownJob + " does not exist"},
			{"/v1/deletejobqueue", `{"jobQueue":"nope"}`, "Job queue nope does not exist"},
			{"/v1/deletejobqueue", `{"jobQueue":"HQ"}`, "Job queue HQ must be DISABLED before it is deleted"},
			{"/v1/deleteserviceenvironment", `{"serviceEnvironment":"se"}`, "Service environment se must be DISABLED before it is deleted"},
			{"/v1/submitservicejob", submitBody("x", "nope", "QS1", "", trainingPayload(1, 0)), "Job queue nope does not exist"},
			{"/v1/submitservicejob", submitBody("x", "HQ", "QS9", "", trainingPayload(1, 0)), "Quota share QS9 does not exist in job queue HQ"},
		} {
			wantRawError(t, srv.Do(t, "POST", tt.path, tt.body), 400, "ClientException", tt.want)
		}
		r := srv.Do(t, "POST", "/v1/terminateservicejobs", `{"jobs":["`+unknownJob+`"],"reason":"x"}`)
		if want := `{"successful":[],"errors":[{"job":"` + unknownJob + `","code":"ClientException","message":"Job ` + unknownJob + ` does not exist"}]}`; r.Body != want {
			t.Errorf("TerminateServiceJobs: %d %s\nwant %s", r.Status, r.Body, want)
		}
	})

	t.Run("Jobs", func(t *testing.T) {
		ok := submitText(t, srv, "ok", "", trainingPayload(1, time.Millisecond))
		big := submitText(t, srv, "big", "", trainingPayload(5, 0))
		fails := submitText(t, srv, "fails", "", exitPayload(3))
		timedOut := submitText(t, srv, "timed-out", `,"timeoutConfig":{"attemptDurationSeconds":1}`, trainingPayload(1, 0))

		wantJobText(t, ctx, c, ok, "SUCCEEDED", "Training job completed", "Training job completed")
		wantJobText(t, ctx, c, fails, "FAILED", "exit code 3", "exit code 3")
		wantJobText(t, ctx, c, timedOut, "FAILED", "Attempt duration exceeded", "Attempt duration exceeded")
		wantJobText(t, ctx, c, big, "RUNNABLE",
			"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - the job needs 5 ml.g5.xlarge; service environment se has at most 4", "")

		// A job terminated by its user says what the user said.
		running := submitText(t, srv, "running", "", trainingPayload(1, 0))
		wantJobText(t, ctx, c, running, "RUNNING", "", "")
		_, err := c.TerminateServiceJob(ctx, &batch.TerminateServiceJobInput{JobId: aws.String(running), Reason: aws.String("done with it")})
		fatalIf(t, err)
		wantJobText(t, ctx, c, running, "FAILED", "done with it", "done with it")
		wantRawError(t, srv.Do(t, "POST", "/v1/updateservicejob", `{"jobId":"`+running+`","schedulingPriority":3}`), 400, "ClientException",
			"Job "+running+" is in a terminal state (FAILED); its priority cannot change")
	})

	// A job preempted in its share waits again, its attempt saying by
	// whom.
	t.Run("Preempted", func(t *testing.T) {
		body := `{"quotaShareName":"QS2","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],` +
			`"resourceSharingConfiguration":{"strategy":"RESERVE"},"preemptionConfiguration":{"inSharePreemption":"ENABLED"}}`
		if r := srv.Do(t, "POST", "/v1/createquotashare", body); r.Status != 200 {
			t.Fatalf("CreateQuotaShare: %d %s", r.Status, r.Body)
		}
		low := submitTo(t, srv, "low", "QS2", `,"schedulingPriority":1`, trainingPayload(1, 0))
		wantJobText(t, ctx, c, low, "RUNNING", "", "")
		high := submitTo(t, srv, "high", "QS2", `,"schedulingPriority":5`, trainingPayload(1, 0))
		wantJobText(t, ctx, c, high, "RUNNING", "", "")
		wantJobText(t, ctx, c, low, "RUNNABLE",
			"QS2 at its limit of 1 ml.g5.xlarge; only LEND_AND_BORROW shares may borrow the idle instance beyond the quota share limits",
			"Preempted: in-share preemption (higher priority job "+high+")")
	})

	// The jobs of a deleted queue fail saying so; a job that waited has no
	// attempt to speak of.
	t.Run("QueueDeleted", func(t *testing.T) {
		waiting := submitText(t, srv, "waiting", "", trainingPayload(5, 0))
		wantJobText(t, ctx, c, waiting, "RUNNABLE",
			"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - the job needs 5 ml.g5.xlarge; service environment se has at most 4", "")
		for _, rq := range []struct{ path, body string }{
			{"/v1/updatejobqueue", `{"jobQueue":"HQ","state":"DISABLED"}`},
			{"/v1/deletejobqueue", `{"jobQueue":"HQ"}`},
		} {
			if r := srv.Do(t, "POST", rq.path, rq.body); r.Status != 200 {
				t.Fatalf("%s: %d %s", rq.path, r.Status, r.Body)
			}
		}
		wantJobText(t, ctx, c, waiting, "FAILED", "Job queue deleted", "")
	})
}

// Ensure an attempt that its executor ends without a reason is said, on
// the wire, to have failed or stopped, in words.
func TestWireTextsAttemptEndWithoutReason(t *testing.T) {
	srv, c := newEngineServerWith(t, executortest.WithoutReasons)
	ctx := t.Context()
	setUpTextsQueue(t, srv)
	fails := submitText(t, srv, "fails", "", exitPayload(3))
	timedOut := submitText(t, srv, "timed-out", `,"timeoutConfig":{"attemptDurationSeconds":1}`, trainingPayload(1, 0))
	wantJobText(t, ctx, c, fails, "FAILED", "Attempt failed", "Attempt failed")
	wantJobText(t, ctx, c, timedOut, "FAILED", "Attempt stopped", "Attempt stopped")
}

// setUpTextsQueue makes the environment se of 4 ml.g5.xlarge, the queue
// HQ and its share QS1 of 2, and waits until the queue is VALID.
func setUpTextsQueue(t *testing.T, srv *testserver.Server) {
	t.Helper()
	for _, rq := range []struct{ path, body string }{
		{"/v1/createschedulingpolicy", `{"name":"sp","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`},
		{"/v1/createserviceenvironment", `{"serviceEnvironmentName":"se","serviceEnvironmentType":"SAGEMAKER_TRAINING",` +
			`"capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":4}]}`},
		{"/v1/createjobqueue", `{"jobQueueName":"HQ","jobQueueType":"SAGEMAKER_TRAINING","priority":1,` +
			`"schedulingPolicyArn":"` + testBase.SchedulingPolicy("sp") + `","serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}]}`},
		{"/v1/createquotashare", shareBody("QS1")},
	} {
		if r := srv.Do(t, "POST", rq.path, rq.body); r.Status != 200 {
			t.Fatalf("%s: %d %s", rq.path, r.Status, r.Body)
		}
	}
	testwait.True(t, 10*time.Second, "the job queue VALID", func() bool {
		return strings.Contains(srv.Do(t, "POST", "/v1/describejobqueues", `{"jobQueues":["HQ"]}`).Body, `"status":"VALID"`)
	})
}

func shareBody(name string) string {
	return `{"quotaShareName":"` + name + `","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":2}],` +
		`"resourceSharingConfiguration":{"strategy":"RESERVE"},"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`
}

func submitBody(name, queue, share, extra, payload string) string {
	p, _ := json.Marshal(payload)
	return `{"jobName":"` + name + `","jobQueue":"` + queue + `","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"` + share + `"` +
		extra + `,"serviceRequestPayload":` + string(p) + `}`
}

// submitText submits a job to HQ's share QS1 and returns its ID.
func submitText(t *testing.T, srv *testserver.Server, name, extra, payload string) string {
	t.Helper()
	return submitTo(t, srv, name, "QS1", extra, payload)
}

// submitTo submits a job to HQ's share and returns its ID.
func submitTo(t *testing.T, srv *testserver.Server, name, share, extra, payload string) string {
	t.Helper()
	r := srv.Do(t, "POST", "/v1/submitservicejob", submitBody(name, "HQ", share, extra, payload))
	var out struct{ JobID string }
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil || r.Status != 200 || out.JobID == "" {
		t.Fatalf("SubmitServiceJob %s: %d %s", name, r.Status, r.Body)
	}
	return out.JobID
}

// exitPayload runs one instance that fails at once with code.
func exitPayload(code int) string {
	b, _ := json.Marshal(map[string]any{
		"TrainingJobName": "t",
		"ResourceConfig":  map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10},
		"Environment":     map[string]string{"SHARQ_SIMULATED_RUNTIME_MS": "1", "SHARQ_SIMULATED_EXIT_CODE": fmt.Sprint(code)},
	})
	return string(b)
}

// wantJobText waits until job id has status, then checks its statusReason
// and, when it has attempts, its last attempt's.
func wantJobText(t *testing.T, ctx context.Context, c *batch.Client, id, status, reason, attemptReason string) {
	t.Helper()
	var out *batch.DescribeServiceJobOutput
	testwait.True(t, 10*time.Second, id+" "+status, func() bool {
		var err error
		out, err = c.DescribeServiceJob(ctx, &batch.DescribeServiceJobInput{JobId: aws.String(id)})
		fatalIf(t, err)
		return string(out.Status) == status
	})
	if got := aws.ToString(out.StatusReason); got != reason {
		t.Errorf("%s %s: statusReason %q, want %q", aws.ToString(out.JobName), status, got, reason)
	}
	if attemptReason == "" {
		return
	}
	n := len(out.Attempts)
	if n == 0 {
		t.Errorf("%s %s: no attempts, want one that says %q", aws.ToString(out.JobName), status, attemptReason)
	} else if got := aws.ToString(out.Attempts[n-1].StatusReason); got != attemptReason {
		t.Errorf("%s %s: last attempt's statusReason %q, want %q", aws.ToString(out.JobName), status, got, attemptReason)
	}
}
