package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/testwait"
)

// testRole is the environment variable that makes this test binary play a
// part in TestStartedServerDiesWithLoad instead of running the tests.
const testRole = "SHARQ_LOAD_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(testRole) {
	case "server": // stands in for `sharq serve`: waits to be stopped
		waitForever()
	case "starter": // stands in for sharq-load: starts a server, says its PID, waits
		os.Setenv(testRole, "server")
		p, err := startServer(context.Background(), os.Args[0], os.Getenv("SHARQ_LOAD_TEST_DIR"), nil, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(p.cmd.Process.Pid)
		waitForever()
	case "writer": // writes past its reader's end, as `sharq-load ... | head` does
		ignoreClosedOutput()
		for range 3 {
			fmt.Println("a line of the report")
			time.Sleep(50 * time.Millisecond) // later lines come after the reader has gone, as from a real report
		}
		os.WriteFile(os.Getenv("SHARQ_LOAD_TEST_DIR")+"/finished", nil, 0o644)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// waitForever sleeps until the process is killed. NB: not select {}, which
// the runtime ends as a deadlock when no other goroutine is left.
func waitForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// TestStartedServerDiesWithLoad kills a process that started a server as
// sharq-load does, with SIGKILL so that it cannot clean up, and checks that
// the server does not outlive it.
func TestStartedServerDiesWithLoad(t *testing.T) {
	starter := exec.Command(os.Args[0], "-test.run", "^$")
	starter.Env = append(os.Environ(), testRole+"=starter", "SHARQ_LOAD_TEST_DIR="+t.TempDir())
	starter.Stderr = os.Stderr
	out, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		starter.Process.Kill()
		t.Fatalf("no server PID from the starter: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatalf("the server %d is not running before its starter is killed", pid)
	}
	starter.Process.Kill()
	starter.Wait()
	if testwait.For(10*time.Second, func() error {
		if alive(pid) {
			return errors.New("alive")
		}
		return nil
	}) != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the server %d still runs 10 s after its starter was killed", pid)
	}
}

// alive tells whether process pid exists and is not a zombie left for a
// parent that does not reap.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// TestClosedOutputIsNotFatal closes the pipe a stand-in for sharq-load
// writes its report to, after the first line, and checks that it still
// runs to its end (where sharq-load stops its server and removes its data).
func TestClosedOutputIsNotFatal(t *testing.T) {
	dir := t.TempDir()
	w := exec.Command(os.Args[0], "-test.run", "^$")
	w.Env = append(os.Environ(), testRole+"=writer", "SHARQ_LOAD_TEST_DIR="+dir)
	out, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if err := w.Wait(); err != nil {
		t.Fatalf("the writer ended with %v once its output was closed", err)
	}
	if _, err := os.Stat(dir + "/finished"); err != nil {
		t.Fatalf("the writer did not run to its end: %v", err)
	}
}
