package cli

import (
	"net"
	"strings"
	"testing"
)

// Ensure logs copies a job's stdout and stderr where they belong, follows
// a running job to its end, and shows earlier attempts on request.
func TestLogs(t *testing.T) {
	s := newServer(t, true)
	s.ok(Apply, "-f", announcement)

	s.ok(Submit, "--share", "QS1", "--name", "hello", "--", "sh", "-c", "echo out1; echo err1 >&2; echo out2")
	r := s.run(Logs, "-f", "hello")
	expect(t, r, ExitOK, "err1\n")
	if r.stdout != "out1\nout2\n" {
		t.Errorf("logs -f stdout %q", r.stdout)
	}
	if s.status(jobID(1)) != "SUCCEEDED" {
		t.Errorf("logs -f returned while the job is %s", s.status(jobID(1)))
	}
	r = s.run(Logs, "hello", "--stream", "stderr")
	if r.stdout != "" || r.stderr != "err1\n" || r.code != 0 {
		t.Errorf("--stream stderr: %+v", r)
	}

	// Two attempts: both are shown, each under its header; one on request.
	s.ok(Submit, "--share", "QS2", "--name", "flaky", "--retries", "1", "--", "sh", "-c", "echo try; exit 1")
	expect(t, s.run(Wait, "flaky"), ExitFailure, "")
	var both strings.Builder // stdout and stderr in the order they were written
	if code := Logs(t.Context(), []string{"--endpoint", s.url, "--stream", "stdout", "flaky"}, &both, &both); code != ExitOK {
		t.Fatalf("logs flaky: exit %d: %s", code, both.String())
	}
	golden(t, "logs_attempts", both.String())
	r = s.run(Logs, "flaky", "--attempt", "1", "--stream", "stdout")
	if r.stdout != "try\n" || r.stderr != "==> attempt 1 of 2 <==\n" || r.code != 0 {
		t.Errorf("--attempt 1: %+v", r)
	}
	expect(t, s.run(Logs, "flaky", "--attempt", "3"), ExitNotFound, "has 2 attempts, not 3")
	expect(t, s.run(Logs, "hello", "--host", "node1"), ExitUsage, "--host must be algo-N")
	expect(t, s.run(Logs, "hello", "--stream", "all"), ExitUsage, "--stream must be")
}

// Ensure a server without job logs says so in one line.
func TestLogsSimulated(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--", "train")
	expect(t, s.run(Logs, jobID(1)), ExitFailure, "sharq logs: this server's executor keeps no job logs")
}

// Ensure what goes wrong before a request is answered gets a clear line
// and the right exit code.
func TestConnectionAndUsage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, verb := range []verbFunc{Jobs, Shares, Events} {
		var out, errOut strings.Builder
		code := verb(t.Context(), []string{"--endpoint", "http://" + addr}, &out, &errOut)
		if code != ExitFailure || !strings.Contains(errOut.String(), "cannot reach the sharq server at http://"+addr) {
			t.Errorf("exit %d, stderr %q", code, errOut.String())
		}
	}
	var out, errOut strings.Builder
	if code := Jobs(t.Context(), []string{"--endpoint", "ftp://x"}, &out, &errOut); code != ExitUsage {
		t.Errorf("bad endpoint: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Describe(t.Context(), []string{"--bogus"}, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "usage: sharq describe") {
		t.Errorf("unknown flag: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Submit(t.Context(), []string{"-h"}, &out, &errOut); code != ExitOK || !strings.Contains(errOut.String(), "-instance-type") {
		t.Errorf("-h: exit %d, %q", code, errOut.String())
	}
}
