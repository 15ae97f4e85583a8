package cli

import (
	"strings"
	"testing"
)

// Ensure --share-identifier submits to a fair-share queue, and the dry-run
// tells computeReservation at work: alone, team-a may use 7 of the 9
// instances (2 kept back); a job of a second identifier would run at once.
func TestSubmitFairShare(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", "../../examples/fair-share.yaml")
	if got := s.ok(Submit, "--share-identifier", "team-a", "--name", "a1", "--", "train"); !strings.Contains(got, "to fair-jq/team-a") {
		t.Errorf("submit printed %q", got)
	}
	for range 7 {
		s.ok(Submit, "--share-identifier", "team-a", "--name", "a", "--", "train")
	}
	s.waitStatus(jobID(7), "RUNNING")
	s.waitStatus(jobID(8), "RUNNABLE")
	j, err := s.eng.DescribeServiceJob(t.Context(), jobID(8))
	if err != nil {
		t.Fatal(err)
	}
	if want := "waiting for 1 ml.g5.xlarge: 2 instances are kept back for share identifiers not yet active (computeReservation 25%, 1 active)"; j.StatusReason != want {
		t.Errorf("team-a's eighth job waits for %q, want %q", j.StatusReason, want)
	}
	got := s.ok(Submit, "--dry-run", "--share-identifier", "team-a", "--name", "a9", "--", "train")
	if want := "would wait at position 2: blocked behind job " + jobID(8) + " in share team-a\n"; got != want {
		t.Errorf("dry-run of team-a's ninth job printed %q, want %q", got, want)
	}
	if got := s.ok(Submit, "--dry-run", "--share-identifier", "research", "--name", "r1", "--", "train"); !strings.HasPrefix(got, "would be dispatched now") {
		t.Errorf("dry-run of research's first job printed %q", got)
	}
	expect(t, s.run(Submit, "--name", "none", "--", "train"), ExitFailure, "shareIdentifier must be specified")
	if got := s.ok(Shares); !strings.Contains(got, "team-a") || !strings.Contains(got, "FAIR_SHARE") {
		t.Errorf("sharq shares printed:\n%s", got)
	}
}
