package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// With --supervisor, attempts are supervised by that program (here
// cmd/sharq-supervise) instead of the sharq binary, and run the same.
func TestLocalSupervisorFlag(t *testing.T) {
	t.Parallel()
	sup := filepath.Join(t.TempDir(), "sharq-supervise")
	build := exec.Command("go", "build", "-o", sup, "github.com/sharq-dev/sharq/cmd/sharq-supervise")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/sharq-supervise: %v\n%s", err, out)
	}
	s := startLocal(t, "", "--stop-grace", "5s", "--supervisor", sup)
	c := s.client()
	setUpWalkthrough(t, c, 3)
	release := filepath.Join(t.TempDir(), "release")
	job := s.submitLocal(t, c, localJob{name: "job", share: "QS1", priority: 1,
		argv: shell(`while [ ! -f "$RELEASE" ]; do sleep 0.1; done; echo released`), env: map[string]string{"RELEASE": release}})
	d := waitStatus(t, c, job, types.ServiceJobStatusRunning)
	attempt := attemptID(t, d.LatestAttempt.ServiceResourceId)
	want := sup + " __supervise " + s.attemptDir(attempt)
	eventually(t, 30*time.Second, func() error {
		var got []string
		for pid := range s.leftovers() {
			if c := cmdline(pid); strings.Contains(c, "__supervise") {
				got = append(got, c)
			}
		}
		if len(got) != 1 || got[0] != want {
			return notYet("supervisor processes %q, want one %q", got, want)
		}
		return nil
	})
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, job, types.ServiceJobStatusSucceeded)
	if out := s.attemptLog(t, attempt, "stdout"); out != "released\n" {
		t.Errorf("the job printed %q, want \"released\"", out)
	}
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}
