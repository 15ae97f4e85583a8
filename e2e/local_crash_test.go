package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// untilReleased records each start of the job in $RUNS and runs until the
// file $RELEASE exists.
const untilReleased = `echo started >> "$RUNS"; while [ ! -f "$RELEASE" ]; do sleep 0.1; done; echo released`

// kill -9 of the server while jobs run loses none of them: their processes
// run on under their supervisors, a job that ends while the server is down
// is found SUCCEEDED by the next server, the others are still RUNNING with
// the same processes and finish normally, a RUNNABLE job is dispatched
// afterwards, and no job runs twice.
func TestLocalServerCrash(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "5s")
	c := s.client()
	setUpWalkthrough(t, c, 3)
	dir := t.TempDir()
	names := []string{"a", "b", "c"}
	jobs := map[string]string{}
	for i, n := range names {
		env := map[string]string{"RUNS": filepath.Join(dir, n+".runs"), "RELEASE": filepath.Join(dir, n+".release")}
		jobs[n] = s.submitLocal(t, c, localJob{name: n, share: "QS1", priority: int32(3 - i), argv: shell(untilReleased), env: env})
	}
	release := func(n string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, n+".release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a runs on QS1's instance, b on the one it borrows from QS2, c waits.
	waitStatus(t, c, jobs["a"], types.ServiceJobStatusRunning)
	waitStatus(t, c, jobs["b"], types.ServiceJobStatusRunning)
	waitStatus(t, c, jobs["c"], types.ServiceJobStatusRunnable)
	aPids := s.waitInstances(t, "a", 1, 30*time.Second)
	bPids := s.waitInstances(t, "b", 1, 30*time.Second)

	s.kill()
	// The jobs outlive the server; a ends while nobody watches.
	if pids := s.instances("a"); !slices.Equal(pids, aPids) {
		t.Fatalf("after kill -9 of the server, job a's processes are %v, want %v still running", pids, aPids)
	}
	if pids := s.instances("b"); !slices.Equal(pids, bPids) {
		t.Fatalf("after kill -9 of the server, job b's processes are %v, want %v still running", pids, bPids)
	}
	release("a")
	s.waitGone(t, "a", 30*time.Second)

	s2 := s.restart(t, "--stop-grace", "5s")
	c = s2.client()
	a := waitStatus(t, c, jobs["a"], types.ServiceJobStatusSucceeded)
	if len(a.Attempts) != 1 {
		t.Errorf("job a, which ended while the server was down, has %d attempts, want 1", len(a.Attempts))
	}
	if b := describe(t, c, jobs["b"]); b.Status != types.ServiceJobStatusRunning || len(b.Attempts) != 1 {
		t.Errorf("after the restart job b is %s with %d attempts, want still RUNNING its first attempt", b.Status, len(b.Attempts))
	}
	if pids := s2.instances("b"); !slices.Equal(pids, bPids) {
		t.Errorf("after the restart job b's processes are %v, want the same %v", pids, bPids)
	}
	// a's instance goes to c.
	waitStatus(t, c, jobs["c"], types.ServiceJobStatusRunning)
	s2.waitInstances(t, "c", 1, 30*time.Second)
	release("b")
	release("c")
	for _, n := range names {
		d := waitStatus(t, c, jobs[n], types.ServiceJobStatusSucceeded)
		if len(d.Attempts) != 1 {
			t.Errorf("job %s SUCCEEDED with %d attempts, want 1", n, len(d.Attempts))
		}
		if runs, err := os.ReadFile(filepath.Join(dir, n+".runs")); err != nil || string(runs) != "started\n" {
			t.Errorf("job %s's processes started %q times (%v), want exactly once", n, runs, err)
		}
	}
	// DescribeServiceJob answers from memory, ListServiceJobs from the store
	// once the cycle is committed: poll.
	testwait.Until(t, 30*time.Second, func() error {
		out, err := c.ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName), JobStatus: types.ServiceJobStatusSucceeded})
		if err != nil {
			return err
		}
		if len(out.JobSummaryList) != len(names) {
			return notYet("ListServiceJobs SUCCEEDED lists %d jobs, want %d: %s", len(out.JobSummaryList), len(names), js(out.JobSummaryList))
		}
		return nil
	})
	s2.waitNoProcesses(t, 30*time.Second)
	s2.stop()
}
