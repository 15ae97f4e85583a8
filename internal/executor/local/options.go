package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/container"
	"github.com/sharq-dev/sharq/internal/s3data"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Options configures an Executor.
type Options struct {
	// DataDir holds the attempt directories and the default checkpoint
	// directories. Required.
	DataDir string
	// GPUs lists the device indices attempts may use. Nil detects them with
	// nvidia-smi (none when it is absent); a non-nil empty slice means none.
	// Without GPUs, instances are plain slots and get no CUDA_VISIBLE_DEVICES.
	GPUs []int
	// GPUsPerInstance gives the GPUs of an instance type; its entries
	// override DefaultGPUsPerInstance. Unknown types have none.
	GPUsPerInstance map[string]int
	// SupervisorCommand starts the supervisor of DataDir, which is
	// appended. Default: this executable followed by SupervisorArg.
	SupervisorCommand []string
	// Env is the base environment of job processes. Nil means this
	// process's environment, read once by New.
	Env []string
	// DefaultGrace is the grace period of timeouts and of the teardown of an
	// attempt's other instances after one failed. Default 120 s, as
	// SageMaker gives.
	DefaultGrace time.Duration
	// PollInterval is how often supervisors are checked for life, which
	// bounds how late a vanished supervisor is noticed. Transitions arrive
	// through inotify, not this poll. Default 250 ms.
	PollInterval time.Duration
	// Retention is how long ended attempts (state and logs) are kept.
	// Default 72 h; negative keeps them forever.
	Retention time.Duration
	// Logger receives the executor's own diagnostics. Default: discarded.
	Logger *slog.Logger
	// Data moves jobs' channels, models and checkpoints: S3 and local
	// paths. Nil makes one for AWS's S3 with the usual credential chain.
	Data *s3data.Store
	// JobEnv is added to every job's environment before its payload's
	// Environment: where S3 is, say, for the job's own S3 calls.
	JobEnv []string
	// NoS3, when set, says why this server reaches no S3: jobs that read
	// or write s3:// URIs are refused with it at submission.
	NoS3 string
	// Runtime, when set, runs a payload's TrainingImage as a container per
	// host; a payload without an image still runs as processes.
	Runtime *container.Runtime
	// ImageMap rewrites image names before they are run.
	ImageMap container.ImageMap
	// InstanceLimits are the CPU and memory of a container of each
	// instance type; a type not listed has no limits.
	InstanceLimits map[string]InstanceLimits
	// NoMountNamespace runs every instance with its tree at its own path
	// (the SM_* variables say where), as it does anyway without the
	// privilege to make mount namespaces.
	NoMountNamespace bool
	// Held, when set, tells whether this server may still act: it leads
	// on a store shared with others. Queued attempts are launched only
	// while it does; another server, leading now, adopts them.
	Held func() bool
}

// InstanceLimits are the resources of one instance's container.
type InstanceLimits struct {
	CPUs        float64
	MemoryBytes int64
}

// DefaultGPUsPerInstance is the GPU count of the SageMaker instance types
// that have GPUs (trainingjob.GPUs).
var DefaultGPUsPerInstance = trainingjob.GPUTable()

// withDefaults fills unset options; it is the only place that reads the
// process environment, so that the rest of the executor sees plain values.
func (o Options) withDefaults() (Options, error) {
	if o.DataDir == "" {
		return o, errors.New("options: DataDir is required")
	}
	// The supervisor and the jobs run in other directories: paths must be
	// absolute.
	dir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("options: %w", err)
	}
	o.DataDir = dir
	if len(o.SupervisorCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("locate supervisor: %w", err)
		}
		o.SupervisorCommand = []string{self, SupervisorArg}
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.DefaultGrace <= 0 {
		o.DefaultGrace = 120 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.Retention == 0 {
		o.Retention = 72 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	perInst := make(map[string]int, len(DefaultGPUsPerInstance)+len(o.GPUsPerInstance))
	for k, v := range DefaultGPUsPerInstance {
		perInst[k] = v
	}
	for k, v := range o.GPUsPerInstance {
		perInst[k] = v
	}
	o.GPUsPerInstance = perInst
	if o.Data == nil {
		d, err := s3data.New(context.Background(), s3data.Config{CacheDir: filepath.Join(o.DataDir, "cache")})
		if err != nil {
			return o, err
		}
		o.Data = d
	}
	if o.GPUs == nil {
		gpus, err := detectGPUs()
		if err != nil {
			return o, err
		}
		o.GPUs = gpus
	}
	return o, nil
}

// detectGPUs asks nvidia-smi for the device indices. A machine without
// nvidia-smi has no GPUs; one whose nvidia-smi fails is an error, because
// running GPU jobs without isolation would be worse than not starting.
func detectGPUs() ([]int, error) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return []int{}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu=index", "--format=csv,noheader").Output()
	if err != nil {
		return nil, fmt.Errorf("detect gpus: %w", err)
	}
	gpus := []int{}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		i, err := strconv.Atoi(line)
		if err != nil {
			return nil, fmt.Errorf("detect gpus: parse %q: %w", line, err)
		}
		gpus = append(gpus, i)
	}
	return gpus, nil
}
