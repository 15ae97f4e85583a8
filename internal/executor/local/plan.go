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

	"github.com/sharq-dev/sharq/internal/container"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/optml"
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
	// Data is what the executor moves around the processes: channels in
	// before, outputs and checkpoints out after. The supervisor ignores it.
	Data *dataSpec `json:"data,omitempty"`
	// Containers name the hosts' containers, and Network the attempt's
	// network, when the hosts run the training image: the executor
	// removes them before it reports the end. The supervisor ignores them.
	Containers []string `json:"containers,omitempty"`
	Network    string   `json:"network,omitempty"`
}

// hostSpec is one instance process.
type hostSpec struct {
	Name string   `json:"name"`
	Type string   `json:"type"`
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	// Dir is the host's /opt/ml tree and its working directory.
	Dir    string   `json:"dir"`
	Mkdirs []string `json:"mkdirs"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	GPUs   []int    `json:"gpus,omitempty"`
	// MountNS forks the process in a mount namespace of its own, where
	// Args (mountArgv's command line) binds Dir at /opt/ml.
	MountNS bool `json:"mount_ns,omitempty"`
	// Term, when set, is the command that delivers SIGTERM to the host in
	// place of the signal to its process group: a container's, through
	// its runtime.
	Term []string `json:"term,omitempty"`
}

// dataSpec is what moves in and out of an attempt's trees.
type dataSpec struct {
	// Channels are the channels to stage into each host's tree; local
	// ones are linked instead.
	Channels []optml.Channel `json:"channels,omitempty"`
	// ModelURI and OutputURI are where model/ and output/data/ of every
	// host go, merged, when the attempt succeeds ("": nowhere).
	ModelURI  string `json:"model_uri,omitempty"`
	OutputURI string `json:"output_uri,omitempty"`
	// Compressed archives them as tar.gz; otherwise their files are
	// uploaded as they are.
	Compressed bool `json:"compressed,omitempty"`
	// CheckpointURI is restored into the checkpoint directory before the
	// attempt and saved from it after, however it ended.
	CheckpointURI string `json:"checkpoint_uri,omitempty"`
}

// remote tells whether anything must be fetched before the processes run
// or sent after: only then does the attempt need an S3 client.
func (d *dataSpec) remote() bool {
	if d == nil {
		return false
	}
	for _, c := range d.Channels {
		if !c.Local() {
			return true
		}
	}
	for _, u := range []string{d.ModelURI, d.OutputURI, d.CheckpointURI} {
		if _, local := optml.LocalPath(u); u != "" && !local {
			return true
		}
	}
	return false
}

// plan is a prepared attempt waiting for admission.
type plan struct {
	spec  launchSpec
	req   *trainingjob.Request
	hosts []optml.Host
	env   []*envList // per host; GPU variables are added on admission
	need  []int      // GPUs per host
	// ctr is each host's container when they run the training image;
	// their GPUs and environment are added on admission.
	ctr []container.Host
	rt  *container.Runtime
	// linked: staged objects are hard links to the cache, which each host
	// sees under an overlay so that its writes stay its own.
	linked bool
}

// inContainers tells whether the attempt runs its training image.
func (p *plan) inContainers() bool { return p.rt != nil }

// prepare resolves everything about an attempt that does not depend on
// which GPUs it gets. A payload that cannot run returns errCannotStart.
func (e *Executor) prepare(a executor.Attempt, dir string) (*plan, error) {
	j, err := a.ReadRequest()
	if err != nil {
		return nil, cannotStart("%v", err)
	}
	var rt *container.Runtime
	if e.opts.Runtime != nil && j.AlgorithmSpecification.TrainingImage != "" {
		rt = e.opts.Runtime
	} else if len(j.AlgorithmSpecification.ContainerEntrypoint) == 0 {
		return nil, cannotStart("%s", noCommand(e.opts.Runtime != nil))
	}
	grace, err := graceOverride(j)
	if err != nil {
		return nil, err
	}
	hosts := hostsOf(a, j)
	types := make([]string, len(hosts))
	for i, h := range hosts {
		types[i] = h.Type
	}
	need, err := e.gpuNeeds(types)
	if err != nil {
		return nil, err
	}
	data := dataOf(j, a.ID)
	if data.remote() && e.opts.NoS3 != "" {
		return nil, cannotStart("%s", e.opts.NoS3)
	}
	p := &plan{need: need, req: j, hosts: hosts, rt: rt}
	p.spec = launchSpec{
		Timeout:       timeout(a.Timeout, j.StoppingCondition.MaxRuntimeInSeconds),
		Grace:         e.opts.DefaultGrace,
		GraceOverride: grace,
		Checkpoint:    e.checkpointDir(a, j, rt != nil),
		Data:          data,
	}
	if grace != nil {
		p.spec.Grace = *grace
	}
	job := optml.Job{Name: a.ID, Arn: a.TrainingJobArn, Region: regionOf(a.TrainingJobArn)}
	if rt != nil {
		if err := e.prepareContainers(p, a, dir, job); err != nil {
			return nil, err
		}
		return p, nil
	}
	base := newEnvList(append(slices.Clip(e.opts.Env), e.opts.JobEnv...))
	for _, k := range slices.Sorted(maps.Keys(j.Environment)) {
		base.set(k, j.Environment[k])
	}
	argv := append(append([]string{}, j.AlgorithmSpecification.ContainerEntrypoint...), j.AlgorithmSpecification.ContainerArguments...)
	path, err := lookPath(argv[0], base.vars)
	if err != nil {
		return nil, err
	}
	ns := e.mountNS && usesContract(j)
	p.linked = ns && overlayablePath(dir)
	for i := range hosts {
		h, env := p.host(dir, i, base, job, ns)
		if ns {
			var overlays []overlay
			for _, c := range p.stagedChannels() {
				overlays = append(overlays, overlay{
					Source:  filepath.Join(h.Dir, optml.DataDir, c.Name),
					Target:  optml.Root + "/" + optml.DataDir + "/" + c.Name,
					Scratch: filepath.Join(dir, "overlay", h.Name, c.Name),
				})
			}
			h.Path, h.Args, h.MountNS = mountShell, mountArgv(h.Dir, path, argv, overlays), true
		} else {
			h.Path, h.Args = path, argv
		}
		p.spec.Hosts = append(p.spec.Hosts, h)
		p.env = append(p.env, env)
	}
	return p, nil
}

// usesContract tells whether a job run as processes looks for the
// SageMaker contract at /opt/ml: it names a training image, input channels,
// an output path, a checkpoint configuration or hyperparameters, as every
// job the SageMaker SDK builds does. A bare command (sharq submit --
// CMD) gets its tree at its own path, which the SM_* variables give, and
// does not pay for a mount namespace: a few milliseconds of CPU at each
// start, which bound how many short jobs a second a machine runs.
func usesContract(j *trainingjob.Request) bool {
	return j.AlgorithmSpecification.TrainingImage != "" || len(j.InputDataConfig) > 0 || j.OutputDataConfig != (trainingjob.OutputDataConfig{}) ||
		j.CheckpointConfig != (trainingjob.CheckpointConfig{}) || len(j.HyperParameters) > 0
}

// stagedChannels are the channels whose objects are linked from the cache
// into the trees, each shown under an overlay: none unless linked.
func (p *plan) stagedChannels() []optml.Channel {
	if !p.linked || p.spec.Data == nil {
		return nil
	}
	var out []optml.Channel
	for _, c := range p.spec.Data.Channels {
		if !c.Local() {
			out = append(out, c)
		}
	}
	return out
}

// overlayablePath tells whether an overlay's options can name directories
// under dir, which they separate by commas and colons.
func overlayablePath(dir string) bool { return !strings.ContainsAny(dir, ",:") }

// noCommand says why a payload without ContainerEntrypoint cannot run.
func noCommand(containers bool) string {
	if containers {
		return "AlgorithmSpecification needs a TrainingImage, or a ContainerEntrypoint to run as processes"
	}
	return "AlgorithmSpecification.ContainerEntrypoint is required: this server runs jobs as processes on its machine (no container runtime), not images"
}

// prepareContainers makes each host a container of the training image with
// its tree at /opt/ml, its local channels and checkpoint directory bound
// in, on a network of the attempt's own where the hosts are algo-1 to
// algo-N. The container gets the payload's environment and the contract's
// variables, not the server's.
func (e *Executor) prepareContainers(p *plan, a executor.Attempt, dir string, job optml.Job) error {
	j := p.req
	spec := j.AlgorithmSpecification
	if len(p.hosts) > 1 {
		p.spec.Network = "sharq-" + a.ID
	}
	p.linked = p.rt.Overlays() && overlayablePath(dir)
	for i, oh := range p.hosts {
		h, env := p.host(dir, i, newEnvList(e.opts.JobEnv), job, true)
		ctr := container.Host{
			Name:         "sharq-" + a.ID + "-" + oh.Name,
			Hostname:     oh.Name,
			Network:      p.spec.Network,
			Image:        e.opts.ImageMap.Rewrite(spec.TrainingImage),
			Entrypoint:   spec.ContainerEntrypoint,
			Args:         spec.ContainerArguments,
			Mounts:       []container.Mount{{Source: h.Dir, Target: optml.Root}},
			CPUs:         e.opts.InstanceLimits[oh.Type].CPUs,
			MemoryBytes:  e.opts.InstanceLimits[oh.Type].MemoryBytes,
			ShmSizeBytes: shmSize,
			Labels:       map[string]string{container.LabelAttempt: a.ID},
		}
		if ctr.Entrypoint != nil && ctr.Args == nil {
			ctr.Args = []string{}
		}
		for _, c := range optml.Channels(j) {
			if src, ok := optml.LocalPath(c.URI); ok {
				ctr.Mounts = append(ctr.Mounts, container.Mount{Source: src, Target: optml.Root + "/" + optml.DataDir + "/" + c.Name, ReadOnly: true})
			}
		}
		for _, c := range p.stagedChannels() {
			ctr.Mounts = append(ctr.Mounts, container.Mount{Source: filepath.Join(h.Dir, optml.DataDir, c.Name),
				Target: optml.Root + "/" + optml.DataDir + "/" + c.Name, Overlay: true})
		}
		ctr.Mounts = append(ctr.Mounts, container.Mount{Source: p.spec.Checkpoint, Target: optml.CheckpointPath(j)})
		// The runtime's own process runs with the server's environment,
		// and the attempt's name, by which the supervisor knows what it
		// started.
		h.Env = append(slices.Clip(e.opts.Env), "TRAINING_JOB_NAME="+a.ID)
		h.Term = p.rt.TermArgv(ctr.Name)
		// What the runtime would refuse is refused now, before the image
		// is pulled and the data staged.
		if _, err := p.rt.RunArgv(ctr); err != nil {
			return cannotStart("%v", err)
		}
		p.spec.Hosts = append(p.spec.Hosts, h)
		p.spec.Containers = append(p.spec.Containers, ctr.Name)
		p.ctr = append(p.ctr, ctr)
		p.env = append(p.env, env)
	}
	return nil
}

// shmSize is a container's /dev/shm: data loaders pass batches through
// it, and the runtimes' 64 MB default is too small for them.
const shmSize = 1 << 30

// host builds instance i's spec and environment: the payload's
// Environment, then the contract's variables (optml.Env), with paths as
// the process sees its tree: /opt/ml in a mount namespace, else the tree's
// own directory.
func (p *plan) host(dir string, i int, base *envList, job optml.Job, mountNS bool) (hostSpec, *envList) {
	name := p.hosts[i].Name
	hd := filepath.Join(dir, "hosts", name)
	h := hostSpec{
		Name:   name,
		Type:   p.hosts[i].Type,
		Dir:    hd,
		Mkdirs: []string{filepath.Join(hd, optml.ModelDir), filepath.Join(hd, optml.OutputData), p.spec.Checkpoint},
		Stdout: filepath.Join(dir, logsDir, name+".stdout"),
		Stderr: filepath.Join(dir, logsDir, name+".stderr"),
	}
	root := hd
	if mountNS {
		root = optml.Root
	}
	env := newEnvList(base.vars)
	for _, v := range optml.Env(p.req, p.hosts, i, root, job) {
		env.set(v.Name, v.Value)
	}
	env.set("SM_NUM_CPUS", strconv.Itoa(runtime.NumCPU()))
	env.set("SM_NUM_GPUS", "0")
	return h, env
}

// dataOf is what moves in and out of the attempt named jobName.
func dataOf(j *trainingjob.Request, jobName string) *dataSpec {
	d := &dataSpec{
		Channels:      optml.Channels(j),
		ModelURI:      optml.ModelURI(j, jobName),
		OutputURI:     optml.OutputURI(j, jobName),
		Compressed:    optml.Compressed(j),
		CheckpointURI: j.CheckpointConfig.S3Uri,
	}
	if len(d.Channels) == 0 && d.ModelURI == "" && d.CheckpointURI == "" {
		return nil
	}
	return d
}

// regionOf is the region of an ARN, "" when it has none.
func regionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

// assign completes the spec with the GPUs each host got. Without GPUs on
// the machine, nothing is pinned: instances are plain slots. A container
// gets its GPUs as devices, which it numbers from 0.
func (p *plan) assign(gpus [][]int, machineHasGPUs bool) (launchSpec, error) {
	spec := p.spec
	spec.Hosts = append([]hostSpec(nil), p.spec.Hosts...)
	for i := range spec.Hosts {
		env := newEnvList(p.env[i].vars)
		if machineHasGPUs {
			ids := make([]string, len(gpus[i]))
			for k, g := range gpus[i] {
				ids[k] = strconv.Itoa(g)
			}
			if !p.inContainers() {
				env.set("CUDA_VISIBLE_DEVICES", strings.Join(ids, ","))
			}
			env.set("SM_NUM_GPUS", strconv.Itoa(len(gpus[i])))
			spec.Hosts[i].GPUs = gpus[i]
		}
		if !p.inContainers() {
			spec.Hosts[i].Env = env.vars
			continue
		}
		ctr := p.ctr[i]
		ctr.Env, ctr.GPUs = env.vars, spec.Hosts[i].GPUs
		argv, err := p.rt.RunArgv(ctr)
		if err != nil {
			return spec, err
		}
		spec.Hosts[i].Path, spec.Hosts[i].Args = argv[0], argv
	}
	return spec, nil
}

// hostsOf lists the attempt's hosts: those of the payload's
// ResourceConfig (with their instance groups) when they match the
// dispatched capacity, else one per dispatched instance.
func hostsOf(a executor.Attempt, j *trainingjob.Request) []optml.Host {
	hosts := optml.Cluster(j)
	var types []string
	for _, in := range a.Instances {
		for range in.Count {
			types = append(types, in.Type)
		}
	}
	if len(types) == 0 || len(types) == len(hosts) && sameTypes(hosts, types) {
		return hosts
	}
	hosts = make([]optml.Host, len(types))
	for i, t := range types {
		hosts[i] = optml.Host{Name: "algo-" + strconv.Itoa(i+1), Type: t}
	}
	return hosts
}

// sameTypes tells whether the hosts have the types, in any order.
func sameTypes(hosts []optml.Host, types []string) bool {
	count := map[string]int{}
	for _, t := range types {
		count[t]++
	}
	for _, h := range hosts {
		count[h.Type]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
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

// checkpointDir is the checkpoint directory of this machine that outlives
// the job's attempts: CheckpointConfig.LocalPath when it lies outside
// /opt/ml (a directory of this machine, for a job run as processes), else
// one per job under the data dir, which the tree links (or the container
// binds) at LocalPath, by default /opt/ml/checkpoints.
func (e *Executor) checkpointDir(a executor.Attempt, j *trainingjob.Request, inContainer bool) string {
	if p := j.CheckpointConfig.LocalPath; p != "" && !inContainer {
		if _, inTree := optml.UnderRoot(p); !inTree {
			return p
		}
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
