package batchapi_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// The shape tests of package batchapi check how the API writes records a
// fake engine holds; these check the members a client reads of the
// records the real engine makes.

// Ensure a running job, a waiting job, their listing, the queue's
// snapshot and the resources have, on the wire, the members AWS's shapes
// give them as the real engine fills them.
func TestShapesFromTheRealEngine(t *testing.T) {
	srv, _ := newEngineServer(t)
	setUpTextsQueue(t, srv)
	running := submitText(t, srv, "running", `,"schedulingPriority":3,"tags":{"team":"vision"}`, trainingPayload(2, 0))
	waiting := submitText(t, srv, "waiting", "", trainingPayload(2, 0))
	srv.WaitStatus(t, running, "RUNNING")
	testwait.True(t, 10*time.Second, "the waiting job's reason", func() bool {
		j, err := srv.Engine.DescribeServiceJob(t.Context(), waiting)
		return err == nil && strings.HasPrefix(j.StatusReason, "QS1 at its limit")
	})

	job := object(t, srv.Do(t, "POST", "/v1/describeservicejob", `{"jobId":"`+running+`"}`))
	wantMembers(t, "a running job", job, "attempts", "capacityUsage", "createdAt", "jobArn", "jobId", "jobName", "jobQueue",
		"latestAttempt", "quotaShareName", "scheduledAt", "schedulingPriority", "serviceJobType", "serviceRequestPayload",
		"startedAt", "status", "tags")
	var attempts []map[string]json.RawMessage
	if err := json.Unmarshal(job["attempts"], &attempts); err != nil || len(attempts) != 1 {
		t.Fatalf("attempts %s: %v", job["attempts"], err)
	}
	wantMembers(t, "its attempt", attempts[0], "serviceResourceId", "startedAt")
	if got := string(job["latestAttempt"]); !strings.HasPrefix(got, `{"serviceResourceId":{"name":"TrainingJobArn","value":"arn:aws:sagemaker:`+testRegion+`:`+testAccount+`:training-job/`) {
		t.Errorf("latestAttempt %s", got)
	}

	// startedAt is a required member: a job not started has 0.
	job = object(t, srv.Do(t, "POST", "/v1/describeservicejob", `{"jobId":"`+waiting+`"}`))
	wantMembers(t, "a waiting job", job, "capacityUsage", "createdAt", "jobArn", "jobId", "jobName", "jobQueue", "quotaShareName",
		"schedulingPriority", "serviceJobType", "serviceRequestPayload", "startedAt", "status", "statusReason")
	if got := string(job["startedAt"]); got != "0" {
		t.Errorf("a waiting job's startedAt %s, want 0", got)
	}

	// A summary has no schedulingPriority and nothing ServiceJobSummary lacks.
	var list struct{ JobSummaryList []map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(srv.Do(t, "POST", "/v1/listservicejobs", `{"jobQueue":"HQ","jobStatus":"RUNNING"}`).Body), &list); err != nil ||
		len(list.JobSummaryList) != 1 {
		t.Fatalf("ListServiceJobs: %+v %v", list, err)
	}
	wantMembers(t, "a running job's summary", list.JobSummaryList[0], "capacityUsage", "createdAt", "jobArn", "jobId", "jobName",
		"latestAttempt", "quotaShareName", "scheduledAt", "serviceJobType", "startedAt", "status")

	snap := object(t, srv.Do(t, "POST", "/v1/getjobqueuesnapshot", `{"jobQueue":"HQ"}`))
	wantMembers(t, "the snapshot", snap, "frontOfQueue", "frontOfQuotaShares", "queueUtilization")
	for member, want := range map[string]string{
		"frontOfQueue":       `{"jobs":[{"jobArn":"` + testBase.ServiceJob(waiting) + `","earliestTimeAtPosition":`,
		"frontOfQuotaShares": `{"quotaShares":{"QS1":[{"jobArn":"` + testBase.ServiceJob(waiting) + `","earliestTimeAtPosition":`,
		"queueUtilization": `{"totalCapacityUsage":[{"capacityUnit":"ml.g5.xlarge","quantity":2}],"quotaShareUtilization":` +
			`{"topCapacityUtilization":[{"quotaShareName":"QS1","capacityUsage":[{"capacityUnit":"ml.g5.xlarge","quantity":2}]}]},"lastUpdatedAt":`,
	} {
		if got := string(snap[member]); !strings.HasPrefix(got, want) {
			t.Errorf("snapshot's %s\n got %s\nwant %s...", member, got, want)
		}
	}

	// A queue's lists and tags are sent empty, not left out.
	var queues struct{ JobQueues []map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(srv.Do(t, "POST", "/v1/describejobqueues", `{"jobQueues":["HQ"]}`).Body), &queues); err != nil || len(queues.JobQueues) != 1 {
		t.Fatalf("DescribeJobQueues: %+v %v", queues, err)
	}
	for member, want := range map[string]string{"computeEnvironmentOrder": "[]", "jobStateTimeLimitActions": "[]", "tags": "{}"} {
		if got := string(queues.JobQueues[0][member]); got != want {
			t.Errorf("queue's %s = %s, want %s", member, got, want)
		}
	}
}

// object reads an answer that must be a 200 with a JSON object.
func object(t *testing.T, r testserver.Response) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil || r.Status != 200 {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	return m
}

func wantMembers(t *testing.T, what string, m map[string]json.RawMessage, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(m))); diff != "" {
		t.Errorf("%s's members (-want +got):\n%s", what, diff)
	}
}
