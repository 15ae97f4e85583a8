package container

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// CreateNetwork makes a network the attempt's hosts share, with name
// resolution between them; one that exists already is fine.
func (r *Runtime) CreateNetwork(ctx context.Context, name string) error {
	_, err := r.output(ctx, "network", "create", name)
	if ce, ok := errors.AsType[*CommandError](err); ok && ce.say("already exists", "already used") {
		return nil
	}
	return err
}

// RemoveNetwork removes the network; one that is gone already is fine.
func (r *Runtime) RemoveNetwork(ctx context.Context, name string) error {
	_, err := r.output(ctx, "network", "rm", name)
	if ce, ok := errors.AsType[*CommandError](err); ok && ce.say("not found", "no such network") {
		return nil
	}
	return err
}

// TermArgv is the command line that sends SIGTERM to the container's PID
// 1 through the runtime. The run's own signal proxy is not to be relied
// on: podman 4.3's dropped a SIGTERM now and then, with the container
// already running.
func (r *Runtime) TermArgv(name string) []string {
	return r.argv("kill", "--signal", "TERM", name)
}

// Stop sends SIGTERM to the container's PID 1 and SIGKILL after grace
// (rounded up to whole seconds, as the runtimes count it). A container that
// is gone is stopped.
func (r *Runtime) Stop(ctx context.Context, name string, grace time.Duration) error {
	secs := int(math.Ceil(max(grace, 0).Seconds()))
	_, err := r.output(ctx, "stop", "--time", strconv.Itoa(secs), name)
	if isNoContainer(err) {
		return nil
	}
	return err
}

// Remove kills the container if it runs and removes it; one that is gone
// already is fine.
func (r *Runtime) Remove(ctx context.Context, name string) error {
	args := []string{"rm", "--force"}
	if r.Name == "podman" {
		// podman's --force otherwise stops with the container's stop timeout
		// (10 s) first; docker's kills at once.
		args = append(args, "--time", "0")
	}
	_, err := r.output(ctx, append(args, name)...)
	if isNoContainer(err) {
		return nil
	}
	return err
}

func isNoContainer(err error) bool {
	ce, ok := errors.AsType[*CommandError](err)
	return ok && ce.say("no such container", "no container with name or id")
}

// List returns the names of the containers, running or not, that carry the
// label: "key" or "key=value".
func (r *Runtime) List(ctx context.Context, label string) ([]string, error) {
	out, err := r.output(ctx, "ps", "--all", "--filter", "label="+label, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// ImageExists reports whether the image is in the runtime's local store.
func (r *Runtime) ImageExists(ctx context.Context, image string) (bool, error) {
	if r.Name == "podman" {
		_, err := r.output(ctx, "image", "exists", image)
		if ce, ok := errors.AsType[*CommandError](err); ok && ce.ExitCode == 1 {
			return false, nil
		}
		return err == nil, err
	}
	_, err := r.output(ctx, "image", "inspect", "--format", "{{.Id}}", image)
	if ce, ok := errors.AsType[*CommandError](err); ok && ce.say("no such image") {
		return false, nil
	}
	return err == nil, err
}

// Pull fetches the image from its registry.
func (r *Runtime) Pull(ctx context.Context, image string) error {
	_, err := r.output(ctx, "pull", "--quiet", image)
	return err
}

// ImageError is an image that is not on this machine and could not be
// pulled.
type ImageError struct {
	Image string
	Err   error // the pull's failure
}

func (e *ImageError) Error() string {
	words := e.Err.Error()
	if ce, ok := errors.AsType[*CommandError](e.Err); ok {
		words = ce.Words()
	}
	return fmt.Sprintf("image %s is not on this machine and cannot be pulled: %s", e.Image, words)
}

func (e *ImageError) Unwrap() error { return e.Err }

// EnsureImage makes sure the image is on this machine, pulling it when it is
// not, so that a job whose image cannot be had fails before any host starts.
// Its failure to pull is an *ImageError.
func (r *Runtime) EnsureImage(ctx context.Context, image string) error {
	ok, err := r.ImageExists(ctx, image)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	if ok {
		return nil
	}
	if err := r.Pull(ctx, image); err != nil {
		return &ImageError{Image: image, Err: err}
	}
	return nil
}
