package sharqapi_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// submitMaxRuntime submits a job of one ml.g5.xlarge with a max runtime.
func (s *server) submitMaxRuntime(name, share string, seconds int) string {
	s.t.Helper()
	prio := 0
	j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: share, SchedulingPriority: &prio,
		ServiceRequestPayload: fmt.Sprintf(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},"StoppingCondition":{"MaxRuntimeInSeconds":%d}}`, seconds)})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.JobID
}

// Ensure a waiting job's position and the estimates route tell when it
// starts and on what basis, and that ?since= answers only newer estimates.
func TestStartEstimates(t *testing.T) {
	s := start(t, sharqapi.Options{})
	a := s.submitMaxRuntime("a", "QS3", 600) // QS3 keeps its one instance to itself
	aStart := s.wait(a, "RUNNING").StartedAt
	b := s.submitMaxRuntime("b", "QS3", 60)
	want := sharqapi.Estimate{Kind: "ESTIMATED", At: aStart + 600_000, Basis: []string{"MAX_RUNTIME"}}
	var p sharqapi.Position
	testwait.Until(t, 10*time.Second, func() error {
		var out sharqapi.Positions
		s.get("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+b+`","`+a+`"]}`, &out)
		if p = out.Jobs[0]; p.ETA == nil || p.ETA.Kind != want.Kind || p.ETA.At != want.At {
			return fmt.Errorf("b's position %+v, want an estimate %+v", p, want)
		}
		if out.Jobs[1].ETA != nil {
			t.Errorf("running job a has an estimate: %+v", out.Jobs[1].ETA)
		}
		return nil
	})
	if !slices.Equal(p.ETA.Basis, want.Basis) || p.ETA.EstimatedAt < aStart {
		t.Errorf("b's estimate %+v, want %+v made after %d", p.ETA, want, aStart)
	}

	var all sharqapi.Estimates
	s.get("GET", sharqapi.EstimatesPath, "", &all)
	i := slices.IndexFunc(all.Jobs, func(j sharqapi.JobEstimate) bool { return j.JobID == b })
	if i < 0 || all.Jobs[i].At != want.At || all.EstimatedAt == 0 || all.Stop != "ALL_STARTED" {
		t.Errorf("estimates %+v, want b's %+v", all, want)
	}
	var again sharqapi.Estimates
	s.get("GET", fmt.Sprintf("%s?since=%d", sharqapi.EstimatesPath, all.EstimatedAt), "", &again)
	if !again.Unchanged || len(again.Jobs) != 0 || again.EstimatedAt != all.EstimatedAt {
		t.Errorf("estimates since the last: %+v, want unchanged", again)
	}
	wantError(t, s.do("GET", sharqapi.EstimatesPath+"?since=soon", ""), 400, `since must be a time in epoch milliseconds, not "soon"`)
}

// Ensure a job waiting behind jobs that declare no run time, in a share
// with no history, gets no guess.
func TestStartEstimateNoBasis(t *testing.T) {
	s := start(t, sharqapi.Options{})
	_, _, low := s.walkthrough()
	testwait.Until(t, 10*time.Second, func() error {
		var out sharqapi.Positions
		s.get("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+low+`"]}`, &out)
		if e := out.Jobs[0].ETA; e == nil || e.Kind != "NO_BASIS" || e.At != 0 || len(e.Basis) != 0 {
			return fmt.Errorf("low's position %+v, want no basis", out.Jobs[0])
		}
		return nil
	})
}
