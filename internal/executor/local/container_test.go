package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/container"
	"github.com/sharq-dev/sharq/internal/container/containertest"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// containerHarness is an executor that runs training images with podman.
func containerHarness(t *testing.T, opts Options) (*harness, *container.Runtime) {
	t.Helper()
	rt := containertest.Podman(t)
	opts.Runtime = rt
	h := newHarness(t, opts)
	t.Cleanup(func() {
		for _, id := range h.attemptIDs() {
			if left := containertest.Leftovers(t, rt, id, "sharq-"+id); len(left) > 0 {
				t.Errorf("attempt %s left %v", id, left)
			}
		}
	})
	return h, rt
}

// python is a payload that runs a Python program in the test image.
func python(program string) job {
	return job{Image: containertest.PythonImage, Entrypoint: []string{"python3", "-c", program}}
}

// Ensure a training image runs with its tree at /opt/ml: the config files,
// a local channel bound in read-only, the model archived to the output
// path, the contract's environment and none of the server's.
func TestContainerContract(t *testing.T) {
	h, _ := containerHarness(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "SERVER_SECRET=x"}})
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "a.csv"), []byte("1,2\n"), 0o644)
	out := t.TempDir()
	j := python(`import json, os, socket
rc = json.load(open("/opt/ml/input/config/resourceconfig.json"))
rows = open("/opt/ml/input/data/train/a.csv").read()
try:
    open("/opt/ml/input/data/train/b.csv", "w")
    ro = "writable"
except OSError:
    ro = "read-only"
open("/opt/ml/model/model.txt", "w").write(" ".join([rc["current_host"], socket.gethostname(), rows.strip(), ro,
    os.environ["TRAINING_JOB_NAME"], os.environ["SM_CHANNEL_TRAIN"], os.environ.get("SERVER_SECRET", "-")]))
`)
	j.Channels = map[string]string{"train": "file://" + data}
	j.OutputPath = "file://" + out
	h.start(attemptOf("c1", "j", j))
	h.await("c1", executor.Succeeded)
	model := untarFile(t, filepath.Join(out, "c1", "output", "model.tar.gz"))
	if got, want := model["model.txt"], "algo-1 algo-1 1,2 read-only c1 /opt/ml/input/data/train -"; got != want {
		t.Errorf("model.txt = %q, want %q", got, want)
	}
}

// Ensure the hosts of an attempt reach each other by name on the attempt's
// network, which goes with the attempt.
func TestContainerHostsReachEachOther(t *testing.T) {
	h, _ := containerHarness(t, Options{})
	j := python(`import os, socket, time
if os.environ["SM_CURRENT_HOST"] == "algo-2":
    s = socket.socket(); s.bind(("", 9000)); s.listen(1)
    c, _ = s.accept(); c.sendall(b"hello from algo-2"); c.close()
else:
    for _ in range(100):
        try:
            c = socket.create_connection(("algo-2", 9000)); break
        except OSError:
            time.sleep(0.1)
    print(c.recv(100).decode())
`)
	a := attemptOf("two", "j", j)
	a.Instances = []executor.Instances{{Type: "ml.m5.large", Count: 2}}
	h.start(a)
	h.await("two", executor.Succeeded)
	if got := strings.TrimSpace(h.log("two", "algo-1", "stdout")); got != "hello from algo-2" {
		t.Errorf("algo-1 printed %q", got)
	}
}

// Ensure a container that ignores SIGTERM is killed after the grace
// period and removed, and that another attempt's container meanwhile
// keeps running.
func TestContainerStopAfterGrace(t *testing.T) {
	h, _ := containerHarness(t, Options{})
	stubborn := python(`import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)`)
	h.start(attemptOf("stubborn", "j1", stubborn))
	h.start(attemptOf("other", "j2", python(`import time; print("ready", flush=True); time.sleep(6)`)))
	waitFile(t, filepath.Join(h.attemptDir("stubborn"), "logs", "algo-1.stdout"), "ready")
	waitFile(t, filepath.Join(h.attemptDir("other"), "logs", "algo-1.stdout"), "ready")
	h.stop("stubborn", time.Second)
	u := h.await("stubborn", executor.Stopped)
	if !strings.HasSuffix(u.Reason, "killed with SIGKILL after 1s grace period") {
		t.Errorf("reason = %q", u.Reason)
	}
	h.await("other", executor.Succeeded)
}

// Ensure an image that is not here and cannot be pulled fails the attempt
// with a reason that says so, and an image's own entrypoint gets "train".
func TestContainerImages(t *testing.T) {
	h, _ := containerHarness(t, Options{})
	h.start(attemptOf("missing", "j1", job{Image: "localhost/sharq-no-such-image:1"}))
	u := h.await("missing", executor.Failed)
	if !strings.HasPrefix(u.Reason, "CannotStart: image localhost/sharq-no-such-image:1 is not on this machine and cannot be pulled") {
		t.Errorf("reason = %q", u.Reason)
	}
	h.start(attemptOf("own", "j2", job{Image: containertest.EntrypointImage}))
	h.await("own", executor.Succeeded)
	if got := strings.TrimSpace(h.log("own", "algo-1", "stdout")); got != "['train']" {
		t.Errorf("the image's entrypoint got %s", got)
	}
}

// Ensure a container's failure file is its attempt's reason.
func TestContainerFailureFile(t *testing.T) {
	h, _ := containerHarness(t, Options{})
	h.start(attemptOf("f", "j", python(`open("/opt/ml/output/failure", "w").write("AlgorithmError: diverged"); raise SystemExit(2)`)))
	u := h.await("f", executor.Failed)
	if u.Reason != "exit code 2: AlgorithmError: diverged" {
		t.Errorf("reason = %q", u.Reason)
	}
}

// Ensure a container keeps running while no executor is there, and a new
// executor adopts it: its end is reported, its model archived, and its
// container removed.
func TestContainerAdopted(t *testing.T) {
	h, _ := containerHarness(t, Options{})
	out := t.TempDir()
	j := python(`import time
print("ready", flush=True)
time.sleep(2)
open("/opt/ml/model/m.txt", "w").write("done")`)
	j.OutputPath = "file://" + out
	h.start(attemptOf("adopted", "j", j))
	waitFile(t, filepath.Join(h.attemptDir("adopted"), "logs", "algo-1.stdout"), "ready")
	h.e.Close()
	time.Sleep(3 * time.Second) // it ends while no executor listens
	h.reopen()
	h.await("adopted", executor.Succeeded)
	if got := untarFile(t, filepath.Join(out, "adopted", "output", "model.tar.gz"))["m.txt"]; got != "done" {
		t.Errorf("model = %q", got)
	}
}

// Ensure a container's writes into its staged channel, whose files are
// linked from the cache, stay its own.
func TestContainerChannelWritesStayPrivate(t *testing.T) {
	rt := containertest.Podman(t)
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{Runtime: rt})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/train/a.csv", "original\n")
	writer := python(`d = "/opt/ml/input/data/train/"
print(open(d + "a.csv").read(), end="")
open(d + "a.csv", "w").write("modified\n")`)
	writer.Channels = map[string]string{"train": "s3://jobs/data/train"}
	h.start(attemptOf("w", "j1", writer))
	h.await("w", executor.Succeeded)
	reader := python(`print(open("/opt/ml/input/data/train/a.csv").read(), end="")`)
	reader.Channels = writer.Channels
	h.start(attemptOf("r", "j2", reader))
	h.await("r", executor.Succeeded)
	if got := h.log("r", "algo-1", "stdout"); got != "original\n" {
		t.Errorf("the next job read %q", got)
	}
}
