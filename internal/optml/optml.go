// Package optml is the SageMaker training contract on the machine that runs
// a host of an attempt: the /opt/ml tree (the three config files, the
// channels' directories, model/, output/ and the checkpoint directory), the
// environment SageMaker and its training toolkit give the container, the
// failure file read back as the reason, and where the model goes. Every
// executor builds a host's tree and environment through it, so a job sees
// the same contract wherever it runs.
package optml

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Root is where a training container sees its tree.
const Root = "/opt/ml"

// DefaultCheckpointPath is CheckpointConfig.LocalPath's default.
const DefaultCheckpointPath = Root + "/checkpoints"

// homogeneous is the group name SageMaker gives the hosts of a job without
// instance groups.
const homogeneous = "homogeneousCluster"

// Host is one host of an attempt.
type Host struct {
	Name  string // algo-1 ... algo-N
	Type  string // its instance type
	Group string // its instance group; "" for a job without groups
}

// Cluster lists the hosts of an attempt, algo-1 first: one per instance,
// by instance group in the request's order when it has groups.
func Cluster(r *trainingjob.Request) []Host {
	var hosts []Host
	add := func(typ, group string, n int) {
		for range n {
			hosts = append(hosts, Host{Name: "algo-" + strconv.Itoa(len(hosts)+1), Type: typ, Group: group})
		}
	}
	rc := r.ResourceConfig
	switch {
	case rc == nil:
		add("", "", 1)
	case len(rc.InstanceGroups) > 0:
		for _, g := range rc.InstanceGroups {
			add(g.InstanceType, g.InstanceGroupName, g.InstanceCount)
		}
	default:
		n := 1
		if rc.InstanceCount != nil {
			n = max(*rc.InstanceCount, 1)
		}
		add(rc.InstanceType, "", n)
	}
	return hosts
}

// Names are the hosts' names.
func Names(hosts []Host) []string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return names
}

// Channel is one input channel as the contract needs it.
type Channel struct {
	Name string
	// URI is where the data is: s3://..., file://... or an absolute path.
	URI string
	// DataType is S3Prefix or ManifestFile.
	DataType string
	// Distribution is FullyReplicated or ShardedByS3Key.
	Distribution string
	// Mode is File or FastFile (Pipe is refused at submission).
	Mode              string
	ContentType       string
	RecordWrapperType string
}

// Local tells whether the channel's data is a directory of this machine,
// to be bound in rather than copied.
func (c Channel) Local() bool {
	_, ok := LocalPath(c.URI)
	return ok
}

// Channels lists the request's input channels with SageMaker's defaults
// filled in.
func Channels(r *trainingjob.Request) []Channel {
	out := make([]Channel, 0, len(r.InputDataConfig))
	for _, c := range r.InputDataConfig {
		ch := Channel{
			Name:              c.ChannelName,
			DataType:          "S3Prefix",
			Distribution:      "FullyReplicated",
			Mode:              firstOf(c.InputMode, r.AlgorithmSpecification.TrainingInputMode, "File"),
			ContentType:       c.ContentType,
			RecordWrapperType: firstOf(c.RecordWrapperType, "None"),
		}
		switch ds := c.DataSource; {
		case ds.S3DataSource != nil:
			ch.URI = ds.S3DataSource.S3Uri
			ch.DataType = firstOf(ds.S3DataSource.S3DataType, ch.DataType)
			ch.Distribution = firstOf(ds.S3DataSource.S3DataDistributionType, ch.Distribution)
		case ds.FileSystemDataSource != nil:
			ch.URI = ds.FileSystemDataSource.DirectoryPath
		}
		out = append(out, ch)
	}
	return out
}

// LocalPath is the directory of a file:// URI or an absolute path.
func LocalPath(uri string) (string, bool) {
	if strings.HasPrefix(uri, "/") {
		return filepath.Clean(uri), true
	}
	if p, ok := strings.CutPrefix(uri, "file://"); ok && strings.HasPrefix(p, "/") {
		return filepath.Clean(p), true
	}
	return "", false
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Paths of the tree, relative to its root.
const (
	ConfigDir  = "input/config"
	DataDir    = "input/data"
	ModelDir   = "model"
	OutputDir  = "output"
	OutputData = "output/data"
	Failure    = "output/failure"
)

// CheckpointPath is where the job keeps its checkpoints in its own file
// system: CheckpointConfig.LocalPath, else /opt/ml/checkpoints.
func CheckpointPath(r *trainingjob.Request) string {
	return firstOf(r.CheckpointConfig.LocalPath, DefaultCheckpointPath)
}

// UnderRoot tells whether p, a path as the job sees it, lies in /opt/ml,
// and gives it relative to the tree's root.
func UnderRoot(p string) (string, bool) {
	rel, ok := strings.CutPrefix(path.Clean(p), Root+"/")
	if !ok {
		return "", false
	}
	return rel, true
}

// Write makes host i's tree under dir: the three config files, a directory
// per channel, model/, output/data/ and, when the checkpoint path lies in
// /opt/ml, its directory. It writes the files afresh, so that a tree kept
// from an earlier attempt says what this attempt is.
func Write(dir string, r *trainingjob.Request, hosts []Host, i int) error {
	dirs := []string{ConfigDir, ModelDir, OutputData}
	for _, c := range Channels(r) {
		dirs = append(dirs, filepath.Join(DataDir, c.Name))
	}
	if rel, ok := UnderRoot(CheckpointPath(r)); ok {
		dirs = append(dirs, rel)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]any{
		"hyperparameters.json": hyperParameters(r),
		"resourceconfig.json":  resourceConfig(hosts, i),
		"inputdataconfig.json": inputDataConfig(r),
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, ConfigDir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hyperParameters is the map as given: SageMaker takes only strings, and
// the SDK sends each value JSON-encoded in one.
func hyperParameters(r *trainingjob.Request) map[string]json.RawMessage {
	if r.HyperParameters == nil {
		return map[string]json.RawMessage{}
	}
	return r.HyperParameters
}

type resourceConfigFile struct {
	CurrentHost          string          `json:"current_host"`
	CurrentInstanceType  string          `json:"current_instance_type"`
	CurrentGroupName     string          `json:"current_group_name"`
	Hosts                []string        `json:"hosts"`
	InstanceGroups       []instanceGroup `json:"instance_groups"`
	NetworkInterfaceName string          `json:"network_interface_name"`
}

type instanceGroup struct {
	Name  string   `json:"instance_group_name"`
	Type  string   `json:"instance_type"`
	Hosts []string `json:"hosts"`
}

func resourceConfig(hosts []Host, i int) resourceConfigFile {
	var groups []instanceGroup
	for _, h := range hosts {
		name := firstOf(h.Group, homogeneous)
		k := slices.IndexFunc(groups, func(g instanceGroup) bool { return g.Name == name })
		if k < 0 {
			groups = append(groups, instanceGroup{Name: name, Type: h.Type})
			k = len(groups) - 1
		}
		groups[k].Hosts = append(groups[k].Hosts, h.Name)
	}
	h := hosts[i]
	return resourceConfigFile{
		CurrentHost:          h.Name,
		CurrentInstanceType:  h.Type,
		CurrentGroupName:     firstOf(h.Group, homogeneous),
		Hosts:                Names(hosts),
		InstanceGroups:       groups,
		NetworkInterfaceName: "eth0",
	}
}

type channelConfig struct {
	ContentType        string `json:",omitempty"`
	TrainingInputMode  string
	S3DistributionType string
	RecordWrapperType  string
}

func inputDataConfig(r *trainingjob.Request) map[string]channelConfig {
	out := map[string]channelConfig{}
	for _, c := range Channels(r) {
		out[c.Name] = channelConfig{
			ContentType:        c.ContentType,
			TrainingInputMode:  c.Mode,
			S3DistributionType: c.Distribution,
			RecordWrapperType:  c.RecordWrapperType,
		}
	}
	return out
}

// Job names an attempt's training job for its environment.
type Job struct {
	Name   string // the training job name: the attempt's ID
	Arn    string
	Region string
}

// Env is host i's environment: the payload's Environment, then what
// SageMaker sets (TRAINING_JOB_NAME, TRAINING_JOB_ARN, AWS_REGION) and the
// training toolkit's SM_* variables, with paths as the job sees its tree at
// root (/opt/ml in a container or mount namespace). They come after
// Environment so that a job cannot misname its host or channels by
// accident. CPUs and GPUs are the executor's to add.
func Env(r *trainingjob.Request, hosts []Host, i int, root string, job Job) []trainingjob.Var {
	var vars []trainingjob.Var
	for _, k := range slices.Sorted(maps.Keys(r.Environment)) {
		vars = append(vars, trainingjob.Var{Name: k, Value: r.Environment[k]})
	}
	at := func(rel string) string { return path.Join(root, rel) }
	channels := map[string]string{}
	for _, c := range Channels(r) {
		channels[c.Name] = at(path.Join(DataDir, c.Name))
	}
	vars = append(vars, r.ToolkitVars(job.Name, channels)...)
	h := hosts[i]
	ckpt := CheckpointPath(r)
	if rel, ok := UnderRoot(ckpt); ok {
		ckpt = at(rel)
	}
	vars = append(vars,
		trainingjob.Var{Name: "TRAINING_JOB_ARN", Value: job.Arn},
		trainingjob.Var{Name: "SM_HOSTS", Value: trainingjob.JSONString(Names(hosts))},
		trainingjob.Var{Name: "SM_CURRENT_HOST", Value: h.Name},
		trainingjob.Var{Name: "SM_CURRENT_INSTANCE_TYPE", Value: h.Type},
		trainingjob.Var{Name: "SM_CURRENT_INSTANCE_GROUP", Value: firstOf(h.Group, homogeneous)},
		trainingjob.Var{Name: "SM_MASTER_ADDR", Value: hosts[0].Name},
		trainingjob.Var{Name: "SM_INPUT_DIR", Value: at("input")},
		trainingjob.Var{Name: "SM_INPUT_CONFIG_DIR", Value: at(ConfigDir)},
		trainingjob.Var{Name: "SM_MODEL_DIR", Value: at(ModelDir)},
		trainingjob.Var{Name: "SM_OUTPUT_DIR", Value: at(OutputDir)},
		trainingjob.Var{Name: "SM_OUTPUT_DATA_DIR", Value: at(OutputData)},
		trainingjob.Var{Name: "SM_CHECKPOINT_DIR", Value: ckpt},
	)
	if job.Region != "" {
		vars = append(vars, trainingjob.Var{Name: "AWS_REGION", Value: job.Region})
	}
	return vars
}

// maxFailure is how much of the failure file becomes the reason, as
// SageMaker's FailureReason takes.
const maxFailure = 1024

// FailureReason is the start of the failure file the job wrote in the
// tree at dir, "" when it wrote none.
func FailureReason(dir string) string {
	f, err := os.Open(filepath.Join(dir, Failure))
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, maxFailure)
	n, _ := f.Read(b)
	return strings.TrimSpace(strings.ToValidUTF8(string(b[:n]), ""))
}

// OutputPrefix is where an attempt's archives go: <S3OutputPath>/<training
// job name>/output, "" when the request names no output path.
func OutputPrefix(r *trainingjob.Request, jobName string) string {
	p := r.OutputDataConfig.S3OutputPath
	if p == "" {
		return ""
	}
	return strings.TrimSuffix(p, "/") + "/" + jobName + "/output"
}

// Compressed tells whether the outputs are archived as tar.gz (GZIP, the
// default) rather than uploaded as their files (NONE).
func Compressed(r *trainingjob.Request) bool {
	return !strings.EqualFold(r.OutputDataConfig.CompressionType, "NONE")
}

// ModelURI is where the model of an attempt goes: model.tar.gz under the
// output prefix, or with CompressionType NONE the prefix model/ its files
// go under; "" without an output path.
func ModelURI(r *trainingjob.Request, jobName string) string {
	p := OutputPrefix(r, jobName)
	switch {
	case p == "":
		return ""
	case Compressed(r):
		return p + "/model.tar.gz"
	}
	return p + "/model/"
}

// OutputURI is where output/data of an attempt goes, as ModelURI.
func OutputURI(r *trainingjob.Request, jobName string) string {
	p := OutputPrefix(r, jobName)
	switch {
	case p == "":
		return ""
	case Compressed(r):
		return p + "/output.tar.gz"
	}
	return p + "/data/"
}

// Locations says where a job's attempt keeps what outlives it.
type Locations struct {
	Model       string `json:"model,omitempty"`       // the model of a succeeded attempt
	Output      string `json:"output,omitempty"`      // its output data
	Checkpoints string `json:"checkpoints,omitempty"` // CheckpointConfig.S3Uri
}

// LocationsOf reads them from a job's payload and its attempt's training
// job ARN (or name); a payload that does not parse has none.
func LocationsOf(payload, trainingJob string) Locations {
	r, err := trainingjob.ParseString(payload)
	if err != nil {
		return Locations{}
	}
	name := path.Base(trainingJob)
	l := Locations{Checkpoints: r.CheckpointConfig.S3Uri}
	if name != "." && name != "/" && trainingJob != "" {
		l.Model, l.Output = ModelURI(r, name), OutputURI(r, name)
	}
	return l
}
