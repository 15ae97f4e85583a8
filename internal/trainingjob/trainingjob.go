// Package trainingjob reads and writes the payload of a SAGEMAKER_TRAINING
// service job: a SageMaker CreateTrainingJob request in its PascalCase JSON.
// The engine reads the capacity a job asks for from it, the executors what
// to run, the CLI and the simulator build it; all of them go through Parse
// and Request, so a payload the engine accepts is one every executor can
// read.
//
// Request declares only the fields sharq uses. Parse checks that the
// payload is a JSON object and that those fields have the right JSON types;
// Demand checks the resources; CheckSubmission, for a new submission, that
// every member is one CreateTrainingJob defines (schema_gen.go, generated
// from the AWS SDK for Go) and that no input is in Pipe mode. What else a
// field must hold (an entrypoint for the local executor, say) is the
// caller's to check.
package trainingjob

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Request is the part of a CreateTrainingJob request that sharq uses.
//
// A Request that Parse returned is read-only: the engine parses a payload
// once and hands the same Request to whoever reads it after (the executor
// starting the attempt, and the jobs submitted with the same payload), so
// a reader that would change it, or one of its slices or maps, changes a
// copy.
type Request struct {
	TrainingJobName        string                 `json:",omitempty"`
	AlgorithmSpecification AlgorithmSpecification `json:",omitzero"`
	HyperParameters        HyperParameters        `json:",omitempty"`
	Environment            map[string]string      `json:",omitempty"`
	InputDataConfig        []Channel              `json:",omitempty"`
	CheckpointConfig       CheckpointConfig       `json:",omitzero"`
	// ResourceConfig is a pointer because a request without one is
	// refused differently from one whose instance type is missing.
	ResourceConfig    *ResourceConfig   `json:",omitempty"`
	StoppingCondition StoppingCondition `json:",omitzero"`
	OutputDataConfig  OutputDataConfig  `json:",omitzero"`

	// raw is the document Parse read; Marshal keeps its other members.
	raw []byte
}

// AlgorithmSpecification says what runs: an image, or for the local
// executor a command.
type AlgorithmSpecification struct {
	TrainingImage       string   `json:",omitempty"`
	TrainingInputMode   string   `json:",omitempty"`
	ContainerEntrypoint []string `json:",omitempty"`
	ContainerArguments  []string `json:",omitempty"`
}

// Channel is one InputDataConfig entry.
type Channel struct {
	ChannelName       string     `json:",omitempty"`
	DataSource        DataSource `json:",omitzero"`
	ContentType       string     `json:",omitempty"`
	CompressionType   string     `json:",omitempty"`
	RecordWrapperType string     `json:",omitempty"`
	// InputMode overrides AlgorithmSpecification.TrainingInputMode for
	// the channel: File, FastFile or Pipe.
	InputMode string `json:",omitempty"`
}

// DataSource is where a channel's data is: one of its members is set.
type DataSource struct {
	S3DataSource         *S3DataSource         `json:",omitempty"`
	FileSystemDataSource *FileSystemDataSource `json:",omitempty"`
}

type S3DataSource struct {
	S3Uri string `json:",omitempty"`
	// S3DataType is S3Prefix (the default) or ManifestFile.
	S3DataType string `json:",omitempty"`
	// S3DataDistributionType is FullyReplicated (the default) or
	// ShardedByS3Key.
	S3DataDistributionType string `json:",omitempty"`
}

type FileSystemDataSource struct {
	DirectoryPath        string `json:",omitempty"`
	FileSystemAccessMode string `json:",omitempty"`
}

// CheckpointConfig says where a job keeps its checkpoints: LocalPath in
// its file system (default /opt/ml/checkpoints), synced with S3Uri.
type CheckpointConfig struct {
	LocalPath string `json:",omitempty"`
	S3Uri     string `json:",omitempty"`
}

// OutputDataConfig says where the model and output archives go:
// <S3OutputPath>/<training job name>/output/.
type OutputDataConfig struct {
	S3OutputPath string `json:",omitempty"`
	// CompressionType is GZIP (the default) or NONE.
	CompressionType string `json:",omitempty"`
}

// ResourceConfig is the capacity a job asks for: InstanceCount instances
// of InstanceType (one when InstanceCount is unset), or its InstanceGroups.
type ResourceConfig struct {
	InstanceType   string          `json:",omitempty"`
	InstanceCount  *int            `json:",omitempty"`
	InstanceGroups []InstanceGroup `json:",omitempty"`
}

type InstanceGroup struct {
	InstanceType      string
	InstanceCount     int
	InstanceGroupName string `json:",omitempty"`
}

type StoppingCondition struct {
	MaxRuntimeInSeconds int64 `json:",omitempty"`
}

// HyperParameters are the job's hyperparameters as written. SageMaker takes
// only strings; a number, boolean or other JSON value is kept rather than
// refused.
type HyperParameters map[string]json.RawMessage

// Strings renders the hyperparameters as strings: a JSON string is its
// content, any other value its JSON text.
func (h HyperParameters) Strings() map[string]string {
	out := make(map[string]string, len(h))
	for k, raw := range h {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		out[k] = s
	}
	return out
}

// New returns the smallest request that says what a job needs: count
// instances of instanceType.
func New(instanceType string, count int) *Request {
	return &Request{ResourceConfig: &ResourceConfig{InstanceType: instanceType, InstanceCount: &count}}
}

// Parse reads a CreateTrainingJob request. It fails with an *Error when b
// is not a JSON object or when a field Request declares has the wrong JSON
// type; members Request does not declare are not looked at.
func Parse(b []byte) (*Request, error) {
	r, err := decode(b)
	if err != nil {
		return nil, err
	}
	r.raw = bytes.Clone(b)
	return r, nil
}

// ParseString is Parse of a request held in a string, copied once.
func ParseString(s string) (*Request, error) {
	b := []byte(s)
	r, err := decode(b)
	if err != nil {
		return nil, err
	}
	r.raw = b
	return r, nil
}

func decode(b []byte) (*Request, error) {
	if r, ok := decodeFast(b); ok {
		return r, nil
	}
	var r Request
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &Error{Malformed: true, Reason: decodeReason(err)}
	}
	return &r, nil
}

// ValidInstanceType tells whether s has the form of a SageMaker Training
// instance type, such as ml.g5.xlarge: ml, then two dot-separated words of
// lower-case letters, digits and hyphens.
func ValidInstanceType(s string) bool {
	rest, ok := strings.CutPrefix(s, "ml.")
	if !ok {
		return false
	}
	family, size, ok := strings.Cut(rest, ".")
	return ok && instanceWord(family) && instanceWord(size)
}

func instanceWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return w != ""
}

// HasInstanceType tells whether the request says what instances it needs,
// by type or by instance groups.
func (r *Request) HasInstanceType() bool {
	rc := r.ResourceConfig
	return rc != nil && (rc.InstanceType != "" || len(rc.InstanceGroups) > 0)
}

// Instances is a count of one instance type.
type Instances struct {
	Type  string
	Count int
}

// MaxInstanceCount is the most instances a count may ask for: SageMaker's
// InstanceCount is a 32-bit Integer. The bound also keeps the sum of
// instance groups of one type from overflowing.
const MaxInstanceCount = 1<<31 - 1

// Demand is the capacity the request asks for: the instance groups' counts
// summed per instance type, in the order the types first appear, or else
// InstanceCount (default 1) instances of InstanceType. It fails with an
// *Error when that is missing or is not a valid request.
func (r *Request) Demand() ([]Instances, error) {
	rc := r.ResourceConfig
	if rc == nil {
		return nil, &Error{Malformed: true, Reason: "ResourceConfig is required"}
	}
	if len(rc.InstanceGroups) > 0 {
		var out []Instances
		for _, g := range rc.InstanceGroups {
			if !ValidInstanceType(g.InstanceType) {
				return nil, refusef("ResourceConfig.InstanceGroups[].InstanceType %q is not a SageMaker Training instance type", g.InstanceType)
			}
			if err := checkCount("ResourceConfig.InstanceGroups[].InstanceCount", g.InstanceCount); err != nil {
				return nil, err
			}
			out = add(out, Instances{Type: g.InstanceType, Count: g.InstanceCount})
		}
		return out, nil
	}
	if rc.InstanceType == "" {
		return nil, refusef("ResourceConfig.InstanceType is required")
	}
	if !ValidInstanceType(rc.InstanceType) {
		return nil, refusef("ResourceConfig.InstanceType %q is not a SageMaker Training instance type", rc.InstanceType)
	}
	n := 1
	if rc.InstanceCount != nil {
		n = *rc.InstanceCount
	}
	if err := checkCount("ResourceConfig.InstanceCount", n); err != nil {
		return nil, err
	}
	return []Instances{{Type: rc.InstanceType, Count: n}}, nil
}

func checkCount(field string, n int) error {
	switch {
	case n < 1:
		return refusef("%s must be at least 1", field)
	case n > MaxInstanceCount:
		return refusef("%s must be at most %d", field, MaxInstanceCount)
	}
	return nil
}

// add adds in to the count of its type, keeping first-seen order.
func add(out []Instances, in Instances) []Instances {
	for i := range out {
		if out[i].Type == in.Type {
			out[i].Count += in.Count
			return out
		}
	}
	return append(out, in)
}
