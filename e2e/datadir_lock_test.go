package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
)

// Ensure one server at a time serves a data dir: a second sharq serve on
// it exits non-zero naming the first's PID and address while the first
// keeps serving; sharq admin and the local executor's supervisor work
// beside it; and a server starts on the dir once the first has stopped,
// cleanly or by kill -9 (with its job's supervisor still running).
func TestOneServerPerDataDir(t *testing.T) {
	t.Parallel()
	first := startLocal(t, "")
	dir := first.dataDir
	c := first.client()
	setUpOneShare(t, c, 1)
	job := first.submitLocal(t, c, localJob{name: "held", share: "team", priority: 1})
	waitStatus(t, c, job, "RUNNING")
	first.supervisor(t)

	addr := strings.TrimPrefix(first.url, "http://")
	bounded, cancel := context.WithTimeout(ctx(t), 60*time.Second)
	defer cancel()
	second := exec.CommandContext(bounded, sharqBin, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--executor", "local")
	out, err := second.CombinedOutput()
	want := []string{fmt.Sprintf("pid %d", first.cmd.Process.Pid), "listening on " + addr, "in use"}
	switch {
	case bounded.Err() != nil:
		t.Fatalf("a second sharq serve on %s still ran after 60 s, want it refused at once:\n%s", dir, out)
	case err == nil:
		t.Errorf("a second sharq serve on %s exited 0, want it refused:\n%s", dir, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("the second sharq serve's output lacks %q:\n%s", w, out)
		}
	}
	if out, err := exec.Command(sharqBin, "admin", "keys", "list", "--data-dir", dir).CombinedOutput(); err != nil {
		t.Errorf("sharq admin keys list beside the server: %v\n%s", err, out)
	}
	if d := describe(t, c, job); d.Status != "RUNNING" {
		t.Errorf("job %s after the refused start: %s, want RUNNING", job, d.Status)
	}
	_, err = c.ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName)})
	fatalIf(t, "ListServiceJobs on the first server after the refused start", err)

	// kill -9: the kernel drops the lock; the supervisor, which keeps the
	// job running, does not hold it.
	first.kill()
	if sups := supervisorsOf(dir); len(sups) != 1 {
		t.Fatalf("supervisors after kill -9 of the server: %v, want the one running the job", sups)
	}
	afterKill := first.restart(t)
	c = afterKill.client()
	waitStatus(t, c, job, "RUNNING")
	afterKill.stop()

	afterStop := afterKill.restart(t)
	c = afterStop.client()
	_, err = c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(job), Reason: aws.String("done")})
	fatalIf(t, "TerminateServiceJob", err)
	waitStatus(t, c, job, "FAILED", "SUCCEEDED")
	afterStop.waitGone(t, "held", 30*time.Second)
	afterStop.stop()
}
