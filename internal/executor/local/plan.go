package local

import (
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// launchSpec is the content of launch.json: all the supervisor needs, so
// that it depends on nothing but this file.
type launchSpec struct {
	Hosts []hostSpec `json:"hosts"`
	// Timeout ends the attempt this long after Running (0: never).
	Timeout time.Duration `json:"timeout"`
	// Grace is the grace period of a timeout and of a teardown after an
	// instance failed.
	Grace time.Duration `json:"grace"`
	// GraceOverride is the payload's SHARQ_STOP_GRACE_SECONDS, which Stop
	// uses instead of the caller's grace.
	GraceOverride *time.Duration `json:"grace_override,omitempty"`
	Checkpoint    string         `json:"checkpoint"`
}

// hostSpec is one instance process.
type hostSpec struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	Mkdirs []string `json:"mkdirs"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	GPUs   []int    `json:"gpus,omitempty"`
}

// plan is a prepared attempt waiting for admission.
type plan struct {
	spec launchSpec
	env  []*envList // per host; GPU variables are added on admission
	need []int      // GPUs per host
}

// prepare resolves everything about an attempt that does not depend on
// which GPUs it gets. A payload that cannot run returns errCannotStart.
func (e *Executor) prepare(a executor.Attempt, dir string) (*plan, error) {
	j, err := parseJob(a.Payload)
	if err != nil {
		return nil, err
	}
	grace, err := graceOverride(j)
	if err != nil {
		return nil, err
	}
	types := hostTypes(a, j)
	need, err := e.gpuNeeds(types)
	if err != nil {
		return nil, err
	}
	base := newEnvList(e.opts.Env)
	for _, k := range slices.Sorted(maps.Keys(j.Environment)) {
		base.set(k, j.Environment[k])
	}
	argv := append(append([]string{}, j.AlgorithmSpecification.ContainerEntrypoint...), j.AlgorithmSpecification.ContainerArguments...)
	path, err := lookPath(argv[0], base.vars)
	if err != nil {
		return nil, err
	}
	p := &plan{need: need}
	p.spec = launchSpec{
		Timeout:       timeout(a.Timeout, j.StoppingCondition.MaxRuntimeInSeconds),
		Grace:         e.opts.DefaultGrace,
		GraceOverride: grace,
		Checkpoint:    e.checkpointDir(a, j),
	}
	if grace != nil {
		p.spec.Grace = *grace
	}
	names := hostNames(len(types))
	for i, typ := range types {
		h, env := p.host(dir, names, i, typ, base, j, a)
		h.Path, h.Args = path, argv
		p.spec.Hosts = append(p.spec.Hosts, h)
		p.env = append(p.env, env)
	}
	return p, nil
}

// host builds instance i's spec and environment. The toolkit variables go
// after the payload's Environment so that a job cannot unpin its GPUs or
// misname its host by accident.
func (p *plan) host(dir string, names []string, i int, typ string, base *envList, j *trainingjob.Request, a executor.Attempt) (hostSpec, *envList) {
	name := names[i]
	hd := filepath.Join(dir, "hosts", name)
	h := hostSpec{
		Name:   name,
		Type:   typ,
		Dir:    hd,
		Mkdirs: []string{filepath.Join(hd, "model"), filepath.Join(hd, "output", "data"), p.spec.Checkpoint},
		Stdout: filepath.Join(dir, logsDir, name+".stdout"),
		Stderr: filepath.Join(dir, logsDir, name+".stderr"),
	}
	env := newEnvList(base.vars)
	for _, v := range j.ToolkitVars(a.ID, channels(j)) {
		env.set(v.Name, v.Value)
	}
	env.set("SM_HOSTS", trainingjob.JSONString(names))
	env.set("SM_CURRENT_HOST", name)
	env.set("SM_CURRENT_INSTANCE_TYPE", typ)
	env.set("SM_NUM_CPUS", strconv.Itoa(runtime.NumCPU()))
	env.set("SM_NUM_GPUS", "0")
	env.set("SM_MODEL_DIR", h.Mkdirs[0])
	env.set("SM_OUTPUT_DIR", filepath.Join(hd, "output"))
	env.set("SM_OUTPUT_DATA_DIR", h.Mkdirs[1])
	env.set("SM_CHECKPOINT_DIR", p.spec.Checkpoint)
	return h, env
}

// assign completes the spec with the GPUs each host got. Without GPUs on
// the machine, nothing is pinned: instances are plain slots.
func (p *plan) assign(gpus [][]int, machineHasGPUs bool) launchSpec {
	spec := p.spec
	spec.Hosts = append([]hostSpec(nil), p.spec.Hosts...)
	for i := range spec.Hosts {
		env := newEnvList(p.env[i].vars)
		if machineHasGPUs {
			ids := make([]string, len(gpus[i]))
			for k, g := range gpus[i] {
				ids[k] = strconv.Itoa(g)
			}
			env.set("CUDA_VISIBLE_DEVICES", strings.Join(ids, ","))
			env.set("SM_NUM_GPUS", strconv.Itoa(len(gpus[i])))
			spec.Hosts[i].GPUs = gpus[i]
		}
		spec.Hosts[i].Env = env.vars
	}
	return spec
}

// hostTypes lists the instance type of each host: the dispatched capacity,
// else the payload's ResourceConfig, else one untyped host.
func hostTypes(a executor.Attempt, j *trainingjob.Request) []string {
	var types []string
	for _, in := range a.Instances {
		for range in.Count {
			types = append(types, in.Type)
		}
	}
	if len(types) > 0 {
		return types
	}
	n, typ := 1, ""
	if rc := j.ResourceConfig; rc != nil {
		typ = rc.InstanceType
		if rc.InstanceCount != nil {
			n = max(*rc.InstanceCount, 1)
		}
	}
	for range n {
		types = append(types, typ)
	}
	return types
}

func hostNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "algo-" + strconv.Itoa(i+1)
	}
	return names
}

// gpuNeeds gives the GPUs per host; an attempt that needs more than the
// machine has would wait forever, so it cannot start.
func (e *Executor) gpuNeeds(types []string) ([]int, error) {
	need := make([]int, len(types))
	if len(e.opts.GPUs) == 0 {
		return need, nil
	}
	total := 0
	for i, t := range types {
		need[i] = e.opts.GPUsPerInstance[t]
		total += need[i]
	}
	if total > len(e.opts.GPUs) {
		return nil, cannotStart("needs %d GPUs, this machine has %d", total, len(e.opts.GPUs))
	}
	return need, nil
}

func (e *Executor) checkpointDir(a executor.Attempt, j *trainingjob.Request) string {
	if j.CheckpointConfig.LocalPath != "" {
		return j.CheckpointConfig.LocalPath
	}
	id := a.JobID
	if id == "" {
		id = a.ID
	}
	return filepath.Join(e.opts.DataDir, "checkpoints", url.PathEscape(id))
}

// timeout is the shorter of the attempt's timeout and the payload's
// MaxRuntimeInSeconds (0: none). A MaxRuntimeInSeconds too long for a
// time.Duration (about 292 years) is no limit: multiplied out, it would
// wrap around to any duration, as short as a fraction of a second.
func timeout(attempt time.Duration, maxRuntimeSecs int64) time.Duration {
	t := attempt
	if maxRuntimeSecs > 0 && maxRuntimeSecs <= maxDurationSeconds {
		if m := time.Duration(maxRuntimeSecs) * time.Second; t <= 0 || m < t {
			t = m
		}
	}
	return max(t, 0)
}

// maxDurationSeconds is the most whole seconds a time.Duration holds.
const maxDurationSeconds = math.MaxInt64 / int64(time.Second)
