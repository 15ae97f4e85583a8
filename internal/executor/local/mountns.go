package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sharq-dev/sharq/internal/optml"
)

// MountArg is the hidden first argument with which the supervisor starts
// an instance in a mount namespace of its own (see MountMain).
const MountArg = "__optml"

// bind is one bind mount of a host's namespace: Source of this machine
// seen at Target by the job.
type bind struct {
	Source   string
	Target   string
	ReadOnly bool
	// Scratch, when set, makes the bind an overlay on Source whose writes
	// go to Scratch, so that they never reach Source (staged files hard
	// linked from the cache).
	Scratch string
}

// mountArgv is the command line that runs argv (path resolved) with binds
// in place: the supervisor forks it in a new mount namespace.
func mountArgv(path string, argv []string, binds []bind) []string {
	out := []string{MountArg}
	for _, b := range binds {
		switch {
		case b.Scratch != "":
			out = append(out, "--overlay", b.Source, b.Target, b.Scratch)
		case b.ReadOnly:
			out = append(out, "--ro", b.Source, b.Target)
		default:
			out = append(out, "--rw", b.Source, b.Target)
		}
	}
	return append(append(out, "--", path), argv...)
}

// MountMain is an instance's first moments in its mount namespace, which
// the supervisor made with the fork (mounts there are private, so nothing
// reaches the machine's): it binds the host's /opt/ml tree, its channels
// and its checkpoint directory where the job expects them, then becomes
// the job's command. args are mountArgv's after MountArg. It returns only
// on failure, with the exit code the instance ends with.
func MountMain(args []string) int {
	binds, argv, err := parseMountArgs(args)
	if err == nil {
		err = mountAll(binds)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sharq: cannot give the job its %s tree: %v\n", optml.Root, err)
		return 125
	}
	err = syscall.Exec(argv[0], argv[1:], os.Environ())
	fmt.Fprintf(os.Stderr, "sharq: cannot execute %s: %v\n", argv[0], err)
	return 126 // as a shell says of a command it cannot execute
}

func parseMountArgs(args []string) ([]bind, []string, error) {
	var binds []bind
	for len(args) > 0 && args[0] != "--" {
		switch {
		case len(args) >= 4 && args[0] == "--overlay":
			binds = append(binds, bind{Source: args[1], Target: args[2], Scratch: args[3]})
			args = args[4:]
		case len(args) >= 3 && (args[0] == "--ro" || args[0] == "--rw"):
			binds = append(binds, bind{Source: args[1], Target: args[2], ReadOnly: args[0] == "--ro"})
			args = args[3:]
		default:
			return nil, nil, fmt.Errorf("bad mount arguments %q", args)
		}
	}
	if len(args) < 3 {
		return nil, nil, errors.New("no command after --")
	}
	return binds, args[1:], nil
}

// mountAll makes each bind in order: the tree first, then what lies in
// it. A read-only bind is remounted so, as a bind mount takes its flags
// only then.
func mountAll(binds []bind) error {
	for _, b := range binds {
		if err := os.MkdirAll(b.Target, 0o755); err != nil {
			return err
		}
		if b.Scratch != "" {
			if err := overlay(b); err != nil {
				return err
			}
			continue
		}
		if err := syscall.Mount(b.Source, b.Target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s at %s: %w", b.Source, b.Target, err)
		}
		if b.ReadOnly {
			if err := syscall.Mount("", b.Target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("make %s read-only: %w", b.Target, err)
			}
		}
	}
	return nil
}

// overlay mounts Source at Target under an overlay whose upper layer is
// in Scratch.
func overlay(b bind) error {
	upper, work := filepath.Join(b.Scratch, "upper"), filepath.Join(b.Scratch, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	opts := "lowerdir=" + b.Source + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", b.Target, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay %s at %s: %w", b.Source, b.Target, err)
	}
	return nil
}
