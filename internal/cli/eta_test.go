package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// waitEstimates waits until the server's latest start estimates cover
// every waiting job, so that tables show them.
func (s *server) waitEstimates() {
	s.t.Helper()
	testwait.True(s.t, 15*time.Second, "estimates of every waiting job", func() bool {
		jobs, _, err := s.eng.ListServiceJobs(context.Background(), engine.ListServiceJobsInput{JobStatus: engine.StatusRunnable})
		if err != nil {
			s.t.Fatal(err)
		}
		res := s.eng.LatestStartEstimates()
		if res == nil {
			return false
		}
		for _, j := range jobs {
			if _, ok := res.Estimates[j.JobID]; !ok {
				return false
			}
		}
		return true
	})
}

// Ensure the jobs table shows each waiting job's estimated start in 80
// columns, and describe says it in full with what it rests on. QS3 keeps
// its one instance to itself; the clock stands still 90 s after t0.
//
//	1 r1  RUNNING   time limit 10m: ends at t0+10m
//	2 w2  RUNNABLE  max runtime 5m (shorter than its time limit): t0+10m
//	3 w3  RUNNABLE  declares nothing: t0+15m, and no one knows when it ends
//	4 w4  RUNNABLE  behind w3: no basis
//	5 w5  RUNNABLE  2 instances: never in QS3
func TestJobsETA(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	payload := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(payload, []byte(`{"StoppingCondition":{"MaxRuntimeInSeconds":300}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s.ok(Submit, "--share", "QS3", "--name", "r1", "--timeout", "10m", "--", "train")
	s.waitStatus(jobID(1), "RUNNING")
	s.ok(Submit, "--share", "QS3", "--name", "w2", "--payload", payload, "--timeout", "1h", "--", "train")
	s.ok(Submit, "--share", "QS3", "--name", "w3-with-a-long-name-that-is-squeezed", "--", "train")
	s.ok(Submit, "--share", "QS3", "--name", "w4", "--timeout", "1h", "--", "train")
	s.ok(Submit, "--share", "QS3", "--name", "w5", "--count", "2", "--", "train")
	s.waitStatus(jobID(5), "RUNNABLE")
	s.waitEstimates()

	table := s.ok(Jobs)
	golden(t, "jobs_eta", table)
	header, _, _ := strings.Cut(table, "\n")
	capacity := strings.Index(header, "PRIO") - strings.Index(header, "CAPACITY")
	if n := len([]rune(header[:strings.Index(header, "REASON")])) - 2 - capacity; n > 80 {
		t.Errorf("the columns up to AGE, but for CAPACITY, take %d columns:\n%s", n, table)
	}
	golden(t, "describe_eta", s.ok(Describe, "w2"))
	golden(t, "describe_eta_no_basis", s.ok(Describe, "w4"))
}
