package container

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Host is one training host's container.
type Host struct {
	Name     string // container name, unique per attempt host: sharq-<attempt>-algo-1
	Hostname string // algo-1: the host name inside, and its alias on Network
	// Network is the attempt's network, made by CreateNetwork, on which the
	// hosts reach each other by Hostname. "" is the runtime's default
	// network; "none" is no network at all.
	Network string
	Image   string
	// Entrypoint replaces the image's entrypoint; nil keeps it. With a nil
	// Entrypoint and nil Args the container runs "train", as SageMaker does.
	Entrypoint []string
	Args       []string
	Env        []string // KEY=value
	Mounts     []Mount
	// GPUs are the host's devices by index: CDI devices nvidia.com/gpu=N for
	// podman, --gpus "device=N,M" for docker.
	GPUs         []int
	CPUs         float64 // --cpus; 0 is no limit
	MemoryBytes  int64   // --memory; 0 is no limit
	ShmSizeBytes int64   // size of /dev/shm; 0 is the runtime's default
	Labels       map[string]string
}

// Mount binds a directory of this machine into the container.
type Mount struct {
	Source, Target string
	ReadOnly       bool
	// Overlay shows Source under an overlay whose writes are the
	// container's alone and go with it (podman's :O); docker has none.
	Overlay bool
}

// Overlays tells whether the runtime mounts a directory under an overlay
// (Mount.Overlay): podman does, docker does not.
func (r *Runtime) Overlays() bool { return r.Name == "podman" }

// LabelAttempt is the label that carries a container's attempt, to find its
// containers again with List.
const LabelAttempt = "sharq.dev/attempt"

// RunArgv is the command line that runs the host's container in the
// foreground and removes it when it ends. The executor spawns it as the
// host's process: SIGTERM to it reaches the container's PID 1, its exit code
// is the container's, and what the container prints comes out on its
// standard output and error. The runtime never pulls here: EnsureImage does
// that before.
func (r *Runtime) RunArgv(h Host) ([]string, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	for _, m := range h.Mounts {
		if m.Overlay && !r.Overlays() {
			return nil, fmt.Errorf("container host %s: mount %q: %s has no overlay mounts", h.Name, m.Source, r.Name)
		}
	}
	a := r.argv("run", "--rm", "--sig-proxy=true", "--pull", "never", "--name", h.Name)
	if r.Name == "podman" {
		// A container of the name left by an earlier try goes first,
		// without a call of its own.
		a = append(a, "--replace")
	}
	a = append(a, r.RunArgs...)
	if h.Hostname != "" {
		a = append(a, "--hostname", h.Hostname)
	}
	if h.Network != "" {
		a = append(a, "--network", h.Network)
		if h.Network != "none" && h.Hostname != "" {
			a = append(a, "--network-alias", h.Hostname)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h.Labels)) {
		a = append(a, "--label", k+"="+h.Labels[k])
	}
	for _, e := range h.Env {
		a = append(a, "--env", e)
	}
	for _, m := range h.Mounts {
		v := m.Source + ":" + m.Target
		switch {
		case m.Overlay:
			v += ":O"
		case m.ReadOnly:
			v += ":ro"
		}
		a = append(a, "--volume", v)
	}
	a = append(a, r.gpuArgs(h.GPUs)...)
	if h.CPUs > 0 {
		a = append(a, "--cpus", strconv.FormatFloat(h.CPUs, 'f', -1, 64))
	}
	if h.MemoryBytes > 0 {
		a = append(a, "--memory", strconv.FormatInt(h.MemoryBytes, 10))
	}
	if h.ShmSizeBytes > 0 {
		a = append(a, "--shm-size", strconv.FormatInt(h.ShmSizeBytes, 10))
	}
	// --entrypoint takes one program in both runtimes (podman's JSON form is
	// its own); the rest of the entrypoint goes before the arguments.
	args := h.Args
	if len(h.Entrypoint) > 0 {
		a = append(a, "--entrypoint", h.Entrypoint[0])
		args = append(slices.Clip(h.Entrypoint[1:]), h.Args...)
	} else if h.Args == nil {
		args = []string{"train"}
	}
	a = append(a, h.Image)
	return append(a, args...), nil
}

func (r *Runtime) gpuArgs(gpus []int) []string {
	if len(gpus) == 0 {
		return nil
	}
	var a []string
	if r.Name == "docker" {
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = strconv.Itoa(g)
		}
		// The quotes keep docker's CSV parser from splitting the list.
		return []string{"--gpus", `"device=` + strings.Join(ids, ",") + `"`}
	}
	for _, g := range gpus {
		a = append(a, "--device", "nvidia.com/gpu="+strconv.Itoa(g))
	}
	return a
}

// check refuses what the command line cannot say.
func (h Host) check() error {
	if h.Name == "" || h.Image == "" {
		return errors.New("container host: a name and an image are needed")
	}
	if strings.HasPrefix(h.Image, "-") {
		return fmt.Errorf("container host %s: image %q starts with '-'", h.Name, h.Image)
	}
	if h.Entrypoint != nil && len(h.Entrypoint) == 0 {
		return fmt.Errorf("container host %s: empty entrypoint", h.Name)
	}
	if len(h.Entrypoint) > 0 && h.Entrypoint[0] == "" {
		return fmt.Errorf("container host %s: entrypoint's program is empty", h.Name)
	}
	for _, m := range h.Mounts {
		// --volume splits on ':'; a path with one would bind the wrong thing.
		if m.Source == "" || m.Target == "" || strings.Contains(m.Source+m.Target, ":") {
			return fmt.Errorf("container host %s: mount %q on %q: paths must be non-empty and without ':'",
				h.Name, m.Source, m.Target)
		}
	}
	for _, e := range h.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("container host %s: environment entry %q is not KEY=value", h.Name, e)
		}
	}
	for _, g := range h.GPUs {
		if g < 0 {
			return fmt.Errorf("container host %s: GPU index %d", h.Name, g)
		}
	}
	return nil
}
