// Package containertest gives tests a real container runtime, podman, with
// the project's test images built (.ci/container-image).
//
// A test that calls Podman is skipped when podman or the images cannot be
// had, unless SHARQ_REQUIRE_CONTAINERS is set (as CI sets it): then it
// fails, so a missing runtime never passes for a green run.
package containertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sharq-dev/sharq/internal/container"
)

// The test images: Debian with python3, and the same with an entrypoint
// that prints its arguments.
const (
	PythonImage     = "localhost/sharq-test-python:1"
	EntrypointImage = "localhost/sharq-test-entrypoint:1"
)

// RequireEnv names the variable that turns a missing runtime from a skip
// into a failure.
const RequireEnv = "SHARQ_REQUIRE_CONTAINERS"

var (
	once   sync.Once
	imgErr error
)

// Podman is podman with sharq's defaults, the test images built.
func Podman(t testing.TB) *container.Runtime {
	t.Helper()
	require := os.Getenv(RequireEnv) != ""
	r, err := container.Find("podman")
	if err == nil {
		once.Do(func() { imgErr = buildImages(r) })
		err = imgErr
	}
	if err != nil {
		if require {
			t.Fatalf("%s is set but %v", RequireEnv, err)
		}
		t.Skipf("%v (set %s=1 to make this a failure)", err, RequireEnv)
	}
	return r
}

func buildImages(r *container.Runtime) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(root, ".ci", "container-image"))
	cmd.Env = append(os.Environ(), "PODMAN="+r.Path, "PODMAN_FLAGS="+strings.Join(r.ExtraArgs, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the test images could not be built: .ci/container-image: %v\n%s", err, out)
	}
	return nil
}

// repoRoot is the directory of go.mod above the test's directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Leftovers lists the containers labelled with the attempt, and whether
// the network is still there.
func Leftovers(t testing.TB, r *container.Runtime, attemptID, network string) []string {
	t.Helper()
	ctx := context.Background()
	names, err := r.List(ctx, container.LabelAttempt+"="+attemptID)
	if err != nil {
		t.Fatal(err)
	}
	if network != "" {
		out, err := exec.Command(r.Path, append(append([]string{}, r.ExtraArgs...), "network", "ls", "--format", "{{.Name}}")...).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range strings.Fields(string(out)) {
			if n == network {
				names = append(names, "network "+n)
			}
		}
	}
	return names
}
