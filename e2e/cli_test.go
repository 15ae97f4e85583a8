package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// scripts/aws-cli-e2e.sh passes against a fresh server that checks
// signatures, with an administrator's key: the walkthrough and every
// operation through the AWS CLI. (An open server takes the same requests
// unchecked; one run of the script is enough.) The CLI is installed on
// every machine of this project, so its absence is a failure, not a skip.
func TestAWSCLIScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"aws", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): this test drives the server with the AWS CLI (pip install awscli) and checks its answers with python3", tool, err)
		}
	}
	dir := t.TempDir()
	admin := createKey(t, dir, "admin", "AdministratorAccess")
	s := startServer(t, serverOptions{dataDir: dir, args: []string{"--auth", "sigv4"}})
	runCLIScript(t, s, "E2E_ACCESS_KEY_ID="+admin.ID, "E2E_SECRET_ACCESS_KEY="+admin.Secret)
	s.stop()
}

// runCLIScript runs scripts/aws-cli-e2e.sh against s, with the extra
// environment env (a key for a server that checks signatures).
func runCLIScript(t *testing.T, s *server, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "scripts/aws-cli-e2e.sh", s.url)
	cmd.Env = append(os.Environ(), env...)
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
}
