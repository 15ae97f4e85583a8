package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/testwait"
)

// The images .ci/container-image builds.
const (
	pythonImage     = "localhost/sharq-test-python:1"
	entrypointImage = "localhost/sharq-test-entrypoint:1"
)

var (
	imagesOnce sync.Once
	imagesErr  error
)

// realPodman is podman with the package's defaults and the test images
// built. Without podman or the images the test skips, unless
// SHARQ_REQUIRE_CONTAINERS is set: then it fails.
func realPodman(t *testing.T) *Runtime {
	t.Helper()
	require := os.Getenv("SHARQ_REQUIRE_CONTAINERS") != ""
	r, err := Find("podman")
	if err != nil {
		if require {
			t.Fatalf("SHARQ_REQUIRE_CONTAINERS is set but %v", err)
		}
		t.Skipf("%v (set SHARQ_REQUIRE_CONTAINERS=1 to make this a failure)", err)
	}
	imagesOnce.Do(func() {
		cmd := exec.Command("../../.ci/container-image")
		cmd.Env = append(os.Environ(), "PODMAN="+r.Path, "PODMAN_FLAGS="+strings.Join(r.ExtraArgs, " "))
		if out, err := cmd.CombinedOutput(); err != nil {
			imagesErr = fmt.Errorf(".ci/container-image: %v\n%s", err, out)
		}
	})
	if imagesErr != nil {
		if require {
			t.Fatalf("SHARQ_REQUIRE_CONTAINERS is set but the test images could not be built: %v", imagesErr)
		}
		t.Skipf("the test images could not be built (set SHARQ_REQUIRE_CONTAINERS=1 to make this a failure): %v", imagesErr)
	}
	return r
}

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// attempt names the test's containers and network, and removes what carries
// its label when the test ends.
func attempt(t *testing.T, r *Runtime) string {
	t.Helper()
	name := fmt.Sprintf("sharq-test-%d-%s", os.Getpid(), strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-"))
	t.Cleanup(func() {
		ctx := context.Background()
		names, err := r.List(ctx, LabelAttempt+"="+name)
		if err != nil {
			t.Error(err)
		}
		for _, n := range names {
			if err := r.Remove(ctx, n); err != nil {
				t.Error(err)
			}
		}
		if err := r.RemoveNetwork(ctx, name); err != nil {
			t.Error(err)
		}
	})
	return name
}

// host is a host of the attempt running python3 -c script, with dir as its
// /opt/ml.
func host(att, hostname, dir, script string) Host {
	return Host{
		Name: att + "-" + hostname, Hostname: hostname, Image: pythonImage,
		Entrypoint: []string{"/usr/bin/python3", "-u", "-c", script},
		Mounts:     []Mount{{Source: dir, Target: "/opt/ml"}},
		Labels:     map[string]string{LabelAttempt: att},
	}
}

// proc is a host's spawned run process.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// spawn starts the host's RunArgv in its own process group, as the executor
// does.
func spawn(t *testing.T, r *Runtime, h Host) *proc {
	t.Helper()
	argv, err := r.RunArgv(h)
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the run process's exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run process did not end; stderr:\n%s", p.stderr.String())
	}
	if ee, ok := errors.AsType[*exec.ExitError](p.err); ok {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// waitFile waits until the container has written path (it has started).
func waitFile(t *testing.T, p *proc, path string) {
	t.Helper()
	err := testwait.For(time.Minute, func() error {
		_, err := os.Stat(path)
		select {
		case <-p.done: // its stderr is whole
			if err != nil {
				t.Fatalf("the run process ended (%v) before %s appeared; stderr:\n%s", p.err, path, p.stderr.String())
			}
		default:
		}
		return err
	})
	if err != nil {
		t.Fatalf("%s did not appear; stderr:\n%s", path, p.stderr.String())
	}
}

func TestHostRunsWithOptML(t *testing.T) {
	r := realPodman(t)
	att, dir := attempt(t, r), t.TempDir()
	h := host(att, "algo-1", dir, `
import os, socket
os.makedirs("/opt/ml/model", exist_ok=True)
def limit(*paths):
    for p in paths:
        if os.path.exists(p):
            return open(p).read().strip()
with open("/opt/ml/model/x", "w") as f:
    f.write("%s %s %s" % (os.environ["TRAINING_JOB_NAME"], socket.gethostname(),
        limit("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max")))
print("to stdout")
raise SystemExit(3)
`)
	h.Env = []string{"TRAINING_JOB_NAME=job one"}
	h.MemoryBytes = 256 << 20
	h.CPUs = 1
	p := spawn(t, r, h)
	if code := p.wait(t); code != 3 {
		t.Errorf("exit code %d, want 3; stderr:\n%s", code, p.stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, "model", "x"))
	if err != nil {
		t.Fatalf("the container's /opt/ml/model/x is not on the host side: %v; stderr:\n%s", err, p.stderr.String())
	}
	if want := "job one algo-1 268435456"; string(got) != want {
		t.Errorf("model/x = %q, want %q", got, want)
	}
	if got := p.stdout.String(); got != "to stdout\n" {
		t.Errorf("stdout = %q", got)
	}
	if names, err := r.List(context.Background(), LabelAttempt+"="+att); err != nil || len(names) != 0 {
		t.Errorf("after the run: containers %q, %v; want none (--rm)", names, err)
	}
}

// SIGTERM through TermArgv reaches the container's PID 1, and the run ends
// with its exit code.
func TestSIGTERMReachesContainer(t *testing.T) {
	r := realPodman(t)
	for range 3 {
		t.Run("", func(t *testing.T) {
			att, dir := attempt(t, r), t.TempDir()
			p := spawn(t, r, host(att, "algo-1", dir, `
import signal, time
def term(*_):
    open("/opt/ml/terminated", "w").write("SIGTERM")
    raise SystemExit(0)
signal.signal(signal.SIGTERM, term)
open("/opt/ml/ready", "w").close()
time.sleep(600)
raise SystemExit(9)
`))
			waitFile(t, p, filepath.Join(dir, "ready"))
			argv := r.TermArgv(att + "-algo-1")
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v: %s", argv, err, out)
			}
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code %d, want 0; stderr:\n%s", code, p.stderr.String())
			}
			if got, err := os.ReadFile(filepath.Join(dir, "terminated")); err != nil || string(got) != "SIGTERM" {
				t.Errorf("the container's handler did not run: %q, %v", got, err)
			}
		})
	}
}

// Stop waits the grace period for a container that ignores SIGTERM, then
// kills it.
func TestStopKillsAfterGrace(t *testing.T) {
	r := realPodman(t)
	att, dir := attempt(t, r), t.TempDir()
	h := host(att, "algo-1", dir, `
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("/opt/ml/ready", "w").close()
time.sleep(600)
`)
	p := spawn(t, r, h)
	waitFile(t, p, filepath.Join(dir, "ready"))
	const grace = 2 * time.Second
	start := time.Now()
	if err := r.Stop(context.Background(), h.Name, grace); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace {
		t.Errorf("Stop returned after %v, before the %v grace period", took, grace)
	}
	if code := p.wait(t); code != 137 {
		t.Errorf("exit code %d, want 137 (SIGKILL); stderr:\n%s", code, p.stderr.String())
	}
	// Stopping what is gone is no error.
	if err := r.Stop(context.Background(), h.Name, grace); err != nil {
		t.Errorf("Stop of a removed container: %v", err)
	}
}

// Two hosts on the attempt's network reach each other by host name; Remove
// and RemoveNetwork leave nothing behind.
func TestHostsReachEachOther(t *testing.T) {
	r := realPodman(t)
	ctx := context.Background()
	att := attempt(t, r)
	for range 2 {
		if err := r.CreateNetwork(ctx, att); err != nil {
			t.Fatal(err)
		}
	}
	dir1, dir2 := t.TempDir(), t.TempDir()
	server := host(att, "algo-2", dir2, `
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 9000))
s.listen()
open("/opt/ml/ready", "w").close()
c, _ = s.accept()
c.sendall(b"pong from " + socket.gethostname().encode() + b" to " + c.recv(100))
c.close()
`)
	server.Network = att
	client := host(att, "algo-1", dir1, `
import socket, time
for i in range(300):
    try:
        s = socket.create_connection(("algo-2", 9000), timeout=5)
        break
    except OSError:
        time.sleep(0.1)
s.sendall(socket.gethostname().encode())
print(s.recv(100).decode())
`)
	client.Network = att
	ps := spawn(t, r, server)
	waitFile(t, ps, filepath.Join(dir2, "ready"))
	pc := spawn(t, r, client)
	if code := pc.wait(t); code != 0 {
		t.Fatalf("client exit code %d; stderr:\n%s", code, pc.stderr.String())
	}
	if code := ps.wait(t); code != 0 {
		t.Fatalf("server exit code %d; stderr:\n%s", code, ps.stderr.String())
	}
	if got, want := strings.TrimSpace(pc.stdout.String()), "pong from algo-2 to algo-1"; got != want {
		t.Errorf("client printed %q, want %q", got, want)
	}

	// A host left running is removed, and its network after it.
	left := host(att, "algo-3", t.TempDir(), `import time; time.sleep(600)`)
	left.Network = att
	pl := spawn(t, r, left)
	waitRunning(t, r, att, pl)
	if err := r.Remove(ctx, left.Name); err != nil {
		t.Fatal(err)
	}
	if code := pl.wait(t); code == 0 {
		t.Errorf("a removed host's run ended with 0")
	}
	for range 2 {
		if err := r.Remove(ctx, left.Name); err != nil {
			t.Errorf("Remove of a removed container: %v", err)
		}
		if err := r.RemoveNetwork(ctx, att); err != nil {
			t.Errorf("RemoveNetwork: %v", err)
		}
	}
	if names, err := r.List(ctx, LabelAttempt+"="+att); err != nil || len(names) != 0 {
		t.Errorf("containers left: %q, %v", names, err)
	}
	out, err := r.output(ctx, "network", "ls", "--format", "{{.Name}}")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range strings.Fields(out) {
		if n == att {
			t.Errorf("network %s is left", att)
		}
	}
}

// waitRunning waits until List finds the attempt's container.
func waitRunning(t *testing.T, r *Runtime, att string, p *proc) {
	t.Helper()
	err := testwait.For(time.Minute, func() error {
		names, err := r.List(context.Background(), LabelAttempt+"="+att)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) > 0 {
			return nil
		}
		select {
		case <-p.done:
			t.Fatalf("the run ended early (%v); stderr:\n%s", p.err, p.stderr.String())
		default:
		}
		return errors.New("not yet")
	})
	if err != nil {
		t.Fatal("List did not find the container")
	}
}

// With no entrypoint given, the image's own runs with "train".
func TestImageEntrypointGetsTrain(t *testing.T) {
	r := realPodman(t)
	att := attempt(t, r)
	for _, tc := range []struct {
		name string
		h    Host
		want string
	}{
		{"image's entrypoint", Host{Image: entrypointImage}, "['train']"},
		{"given entrypoint", Host{Image: pythonImage,
			Entrypoint: []string{"/usr/bin/python3", "-c", "import sys; print(sys.argv[1:])"}, Args: []string{"a", "b c"}},
			"['a', 'b c']"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.h.Name = att + "-" + unsafeName.ReplaceAllString(tc.name, "-")
			tc.h.Labels = map[string]string{LabelAttempt: att}
			p := spawn(t, r, tc.h)
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := strings.TrimSpace(p.stdout.String()); got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnsureImage(t *testing.T) {
	r := realPodman(t)
	ctx := context.Background()
	if err := r.EnsureImage(ctx, pythonImage); err != nil {
		t.Errorf("EnsureImage of a local image: %v", err)
	}
	missing := fmt.Sprintf("localhost/sharq-no-such-image-%d:1", os.Getpid())
	if ok, err := r.ImageExists(ctx, missing); ok || err != nil {
		t.Errorf("ImageExists(%s) = %v, %v", missing, ok, err)
	}
	err := r.EnsureImage(ctx, missing)
	prefix := "image " + missing + " is not on this machine and cannot be pulled: "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("err = %v, want one starting %q", err, prefix)
	}
	// The runtime's own words follow, not just an exit status.
	if words := strings.TrimPrefix(err.Error(), prefix); !strings.Contains(words, missing) || strings.Contains(words, "\n") {
		t.Errorf("the runtime's words %q do not name the image on one line", words)
	}
	if _, ok := errors.AsType[*ImageError](err); !ok {
		t.Errorf("err is a %T, want *ImageError", err)
	}
}

// SIGKILL cannot be forwarded: a run process killed leaves its container
// running, and List and Remove are how it is found and ended.
func TestKilledRunLeavesContainer(t *testing.T) {
	r := realPodman(t)
	ctx := context.Background()
	att := attempt(t, r)
	p := spawn(t, r, host(att, "algo-1", t.TempDir(), `import time; time.sleep(600)`))
	waitRunning(t, r, att, p)
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	names, err := r.List(ctx, LabelAttempt+"="+att)
	if err != nil || len(names) != 1 || names[0] != att+"-algo-1" {
		t.Fatalf("List after the run process was killed = %q, %v; want the container", names, err)
	}
	if err := r.Remove(ctx, names[0]); err != nil {
		t.Fatal(err)
	}
	if names, err := r.List(ctx, LabelAttempt+"="+att); err != nil || len(names) != 0 {
		t.Errorf("List after Remove = %q, %v; want none", names, err)
	}
}
