package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// runScript runs a bash script with args, failing the test with its output
// if it fails. The script and what it starts form one process group, killed
// together if the test gives up on them.
func runScript(t *testing.T, timeout time.Duration, script string, args ...string) string {
	t.Helper()
	for _, tool := range []string{"aws", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): %s drives the server with the AWS CLI (pip install awscli) and checks its answers with python3", tool, err, script)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setpgid: true})
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v failed (%v) after %v; its output:\n%s", script, args, err, time.Since(start).Round(time.Second), out.String())
	}
	t.Logf("%s passed in %v", script, time.Since(start).Round(time.Second))
	return out.String()
}

// scripts/aws-cli-local.sh passes against a fresh server with the local
// executor: the walkthrough's steps 1 to 3 through the AWS CLI, with the
// jobs' real processes checked along the way.
func TestLocalAWSCLIWalkthrough(t *testing.T) {
	t.Parallel()
	s := startLocal(t, "", "--stop-grace", "60s")
	runScript(t, 5*time.Minute, "scripts/aws-cli-local.sh", s.url, s.dataDir)
	s.waitNoProcesses(t, 30*time.Second)
	s.stop()
}
