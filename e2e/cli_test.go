package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// scripts/aws-cli-e2e.sh passes against a fresh server: the walkthrough
// and every operation through the AWS CLI. The CLI is installed on every
// machine of this project, so its absence is a failure, not a skip.
func TestAWSCLIScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"aws", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): this test drives the server with the AWS CLI (pip install awscli) and checks its answers with python3", tool, err)
		}
	}
	s := startServer(t, serverOptions{})

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "scripts/aws-cli-e2e.sh", s.url)
	cmd.Stdout, cmd.Stderr = &out, &out
	// The script and the CLI processes it starts form one group, killed
	// together if the test gives up on them.
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setpgid: true})
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/aws-cli-e2e.sh %s failed (%v) after %v; its output:\n%s", s.url, err, time.Since(start).Round(time.Second), out.String())
	}
	t.Logf("scripts/aws-cli-e2e.sh passed in %v", time.Since(start).Round(time.Second))
	s.stop()
}
