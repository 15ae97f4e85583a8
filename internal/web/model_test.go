package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
)

// Ensure a succeeded job's page says where its model went and where its
// checkpoints are saved, and a running one's only the latter.
func TestJobDetailModel(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	prio := 1
	submit := func(name string, runtimeMS string) string {
		payload, _ := json.Marshal(map[string]any{
			"ResourceConfig":   map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": 1},
			"OutputDataConfig": map[string]any{"S3OutputPath": "s3://models/team-a"},
			"CheckpointConfig": map[string]any{"S3Uri": "s3://ckpt/" + name},
			"Environment":      map[string]any{"SHARQ_SIMULATED_RUNTIME_MS": runtimeMS},
		})
		j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: string(payload), QuotaShareName: "QS1", SchedulingPriority: &prio})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	done := submit("done", "1")
	j := s.wait(done, "SUCCEEDED")
	var d struct{ Model, Checkpoints string }
	status, body := request(t, "GET", s.url+"/sharq/v1/console/jobs/"+done, "", "")
	if status != http.StatusOK || json.Unmarshal([]byte(body), &d) != nil {
		t.Fatalf("%d %s", status, body)
	}
	name := path.Base(j.LatestAttempt.ServiceResourceID.Value)
	if want := "s3://models/team-a/" + name + "/output/model.tar.gz"; d.Model != want || d.Checkpoints != "s3://ckpt/done" {
		t.Errorf("model %q, checkpoints %q; want %q and s3://ckpt/done", d.Model, d.Checkpoints, want)
	}
	running := submit("running", "600000")
	s.wait(running, "RUNNING")
	d.Model, d.Checkpoints = "", ""
	_, body = request(t, "GET", s.url+"/sharq/v1/console/jobs/"+running, "", "")
	if json.Unmarshal([]byte(body), &d); d.Model != "" || d.Checkpoints != "s3://ckpt/running" {
		t.Errorf("a running job's page: model %q, checkpoints %q", d.Model, d.Checkpoints)
	}
}
