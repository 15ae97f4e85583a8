package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sharqBin is the sharq binary built for this test run, or the one
// -sharq-binary names (to profile a benchmark with tools that need the
// binary after the run).
var sharqBin string

var sharqBinary = flag.String("sharq-binary", "", "run this sharq binary instead of building one")

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	defer stopSharedS3()
	if *sharqBinary != "" {
		sharqBin = *sharqBinary
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "sharq-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	sharqBin = filepath.Join(dir, "sharq")
	args := []string{"build", "-o", sharqBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/sharq-dev/sharq/cmd/sharq")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building cmd/sharq (go %v): %v\n", args, err)
		return 1
	}
	return m.Run()
}
