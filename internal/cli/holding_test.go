package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// borrowingJobs sets up testdata/provenance.yaml and brings it to a state
// where QS1 borrows, on capacity nobody owns and on QS2's, and QS2 waits
// to take its capacity back:
//
//	1 b1  QS1  RUNNING   2 instances: its own and one beyond all limits
//	2 b2  QS1  RUNNING   QS2's idle instance; QS2's next job will reclaim it
//	3 q1  QS2  RUNNING   its own
//	4 q2  QS2  RUNNABLE  needs both of QS2's instances: waits for q1
//	5 b3  QS1  RUNNABLE  QS1 has borrowed all its borrow limit allows
func borrowingJobs(t *testing.T) *server {
	s := newServer(t, false)
	s.ok(Apply, "-f", "testdata/provenance.yaml")
	submit := func(n int, args ...string) {
		t.Helper()
		if out := s.ok(Submit, args...); !strings.Contains(out, jobID(n)) {
			t.Fatalf("submit %v: %q does not name job %d", args, out, n)
		}
	}
	submit(1, "--share", "QS1", "--name", "b1", "--count", "2", "--", "train")
	s.waitStatus(jobID(1), "RUNNING")
	submit(2, "--share", "QS1", "--name", "b2", "--", "train")
	s.waitStatus(jobID(2), "RUNNING")
	submit(3, "--share", "QS2", "--name", "q1", "--", "train")
	s.waitStatus(jobID(3), "RUNNING")
	submit(4, "--share", "QS2", "--name", "q2", "--count", "2", "--", "train")
	s.waitStatus(jobID(4), "RUNNABLE")
	submit(5, "--share", "QS1", "--name", "b3", "--", "train")
	s.waitStatus(jobID(5), "RUNNABLE")
	return s
}

// Ensure `sharq jobs` and `describe` say whose capacity each running job
// holds and which can be taken back, and the JSON carries it.
func TestJobsCapacity(t *testing.T) {
	s := borrowingJobs(t)
	golden(t, "jobs_capacity", s.ok(Jobs))
	golden(t, "describe_reclaimable", s.ok(Describe, "b2"))
	golden(t, "describe_own_and_spare", s.ok(Describe, "b1"))

	var rows []jobRow
	if err := json.Unmarshal([]byte(s.ok(Jobs, "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]jobRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if h := byName["b2"].Holding; h == nil || len(h.Own) != 0 ||
		len(h.Borrowed) != 1 || h.Borrowed[0] != (sharqapi.Loan{Unit: "ml.g5.xlarge", Count: 1, Lender: "QS2", Reclaimable: true}) {
		t.Errorf("b2's holding: %+v", h)
	}
	if h := byName["q2"].Holding; h != nil {
		t.Errorf("a waiting job holds %+v", h)
	}

	// On an 80-column terminal, `sharq top` keeps whose capacity each
	// running job holds in view.
	screen := strings.ReplaceAll(topOnTerminal(t, s, 80, 40), s.url, "http://SERVER")
	golden(t, "top_capacity_80_columns", screen)
	for _, row := range []string{`b1 +00000001 +QS1 +RUNNING +own\+spare `, `b2 +00000002 +QS1 +RUNNING +from QS2 `, `q1 +00000003 +QS2 +RUNNING +own `} {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(screen) {
			t.Errorf("no row %q in:\n%s", row, screen)
		}
	}
}
