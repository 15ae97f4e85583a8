package podhost

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/container"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// The image the container tests run jobs in (.ci/container-image).
const pythonImage = "localhost/sharq-test-python:1"

// podman is the podman of the container tests with its test images. It
// skips without them, unless SHARQ_REQUIRE_CONTAINERS is set: then it
// fails.
func podman(t *testing.T) *container.Runtime {
	t.Helper()
	require := os.Getenv("SHARQ_REQUIRE_CONTAINERS") != ""
	fail := func(format string, args ...any) {
		t.Helper()
		if require {
			t.Fatalf("SHARQ_REQUIRE_CONTAINERS is set but "+format, args...)
		}
		t.Skipf(format+" (set SHARQ_REQUIRE_CONTAINERS=1 to make this a failure)", args...)
	}
	r, err := container.Find("podman")
	if err != nil {
		fail("%v", err)
	}
	cmd := exec.Command("../../.ci/container-image")
	cmd.Env = append(os.Environ(), "PODMAN="+r.Path, "PODMAN_FLAGS="+strings.Join(r.ExtraArgs, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("the test images could not be built: %v\n%s", err, out)
	}
	return r
}

// sharqImage builds examples/kube/Containerfile as its README says: a
// static sharq and the machine's TLS roots, FROM scratch.
func sharqImage(t *testing.T, r *container.Runtime) string {
	t.Helper()
	ctx := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctx, "sharq"), "../../cmd/sharq")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sharq: %v\n%s", err, out)
	}
	roots, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		roots = nil // the image needs the file, not its content, here
	}
	if err := os.WriteFile(filepath.Join(ctx, "ca-certificates.crt"), roots, 0o644); err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("localhost/sharq-podhost-test:%d", os.Getpid())
	if out, err := podmanCmd(r, "build", "-t", image, "-f", "../../examples/kube/Containerfile", ctx).CombinedOutput(); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() { podmanCmd(r, "rmi", "-f", image).Run() })
	return image
}

func podmanCmd(r *container.Runtime, args ...string) *exec.Cmd {
	return exec.Command(r.Path, append(append([]string{}, r.ExtraArgs...), args...)...)
}

// Ensure sharq's image stages a pod's /opt/ml, and that the binary it
// copies runs a job in another image and uploads its model, as the kube
// executor's init and training containers do (on the host's network, to
// reach the test's S3).
func TestImageStagesAndRunsInContainers(t *testing.T) {
	r := podman(t)
	w := newWorld(t)
	image := sharqImage(t, r)
	s3test.Put(t, w.c, w.bucket, "train/a", []byte("hello"))
	s3test.Put(t, w.c, w.bucket, "eval/x", []byte("x"))
	s := w.spec(w.payload(""), 0, 1)
	optmlDir, bin := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, error) {
		base := []string{"run", "--rm", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", "--network", "host",
			"-v", optmlDir + ":/opt/ml", "-v", bin + ":" + DefaultBin}
		for _, kv := range w.env(s) {
			if !strings.HasPrefix(kv, "PATH=") {
				base = append(base, "-e", kv)
			}
		}
		var out bytes.Buffer
		cmd := podmanCmd(r, append(base, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := run(image, Arg, "stage", "--bin", DefaultBin); err != nil {
		t.Fatalf("stage in sharq's image: %v\n%s", err, out)
	}
	// The job leaves an orphan, which the wrapper, the container's first
	// process, must reap.
	zombies := `for f in /proc/[0-9]*/stat; do grep -q ') Z ' $f && echo zombie $f; done`
	job := `test "$(cat /opt/ml/input/data/train/a)" = hello && test -z "$` + AccessKeyEnv + `" && echo weights > /opt/ml/model/w.bin` +
		` && sh -c 'sleep 0.2 & exit 0' && sleep 1 && test -z "$(` + zombies + `)"`
	if out, err := run("--entrypoint", DefaultBin+"/"+BinName, pythonImage, Arg, "run", "--termination-log", DefaultBin+"/term",
		"--", "sh", "-c", job); err != nil {
		t.Fatalf("run in the training image: %v (%s)\n%s", err, readIf(filepath.Join(bin, "term")), out)
	}
	model, err := w.get("out/job-1/output/model.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if got := s3test.Untar(t, model); got["w.bin"] != "weights\n" {
		t.Errorf("model.tar.gz holds %v, want w.bin", got)
	}
}
