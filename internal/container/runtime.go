package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Runtime is a container runtime's command-line program and the flags sharq
// adds to its commands.
type Runtime struct {
	Name      string   // "podman" or "docker": which flags to speak
	Path      string   // the program
	ExtraArgs []string // global flags, before every subcommand
	RunArgs   []string // flags added to every run, before the host's own
}

// podmanGlobal and podmanRun are podman's defaults; see the package comment
// for why each is there.
var (
	podmanGlobal = []string{"--runtime", "runc"}
	podmanRun    = []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}
)

// Find picks the runtime: "auto" (or "") is podman if it is on PATH, else
// docker; "podman" and "docker" name one (or a path to it, whose base name
// says which); "none" is no runtime, and gives nil and no error.
func Find(choice string) (*Runtime, error) {
	switch choice {
	case "none":
		return nil, nil
	case "", "auto":
		for _, name := range []string{"podman", "docker"} {
			if path, err := exec.LookPath(name); err == nil {
				return newRuntime(name, path), nil
			}
		}
		return nil, errors.New("container runtime: neither podman nor docker is on PATH")
	}
	name := filepath.Base(choice)
	if name != "podman" && name != "docker" {
		return nil, fmt.Errorf("container runtime %q: want auto, podman, docker or none", choice)
	}
	path, err := exec.LookPath(choice)
	if err != nil {
		return nil, fmt.Errorf("container runtime %s: %w", choice, err)
	}
	return newRuntime(name, path), nil
}

func newRuntime(name, path string) *Runtime {
	r := &Runtime{Name: name, Path: path}
	if name == "podman" {
		r.ExtraArgs = append([]string(nil), podmanGlobal...)
		r.RunArgs = append([]string(nil), podmanRun...)
	}
	return r
}

// CommandError is a runtime command that failed, with what it printed on
// standard error.
type CommandError struct {
	Argv     []string
	ExitCode int // -1 when it did not exit on its own
	Stderr   string
	Err      error
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return strings.Join(e.Argv, " ") + ": " + msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// Words is what the runtime said about the failure: its standard error
// without podman's "Error: " prefix, else the exit status.
func (e *CommandError) Words() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.LastIndex(msg, "\nError: "); i >= 0 {
		msg = msg[i+1:]
	}
	msg = strings.TrimPrefix(msg, "Error: ")
	if msg == "" {
		return e.Err.Error()
	}
	return msg
}

// say reports whether a failed command's standard error contains any of the
// phrases, in any case: how runtimes tell "no such thing" from other errors.
func (e *CommandError) say(phrases ...string) bool {
	s := strings.ToLower(e.Stderr)
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// argv is the full command line of a runtime subcommand.
func (r *Runtime) argv(args ...string) []string {
	out := make([]string, 0, 1+len(r.ExtraArgs)+len(args))
	out = append(out, r.Path)
	out = append(out, r.ExtraArgs...)
	return append(out, args...)
}

// output runs a subcommand and returns its standard output; a failure is a
// *CommandError.
func (r *Runtime) output(ctx context.Context, args ...string) (string, error) {
	argv := r.argv(args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return stdout.String(), &CommandError{Argv: argv, ExitCode: code, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}
