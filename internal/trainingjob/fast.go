package trainingjob

import (
	"encoding/json"
	"slices"

	"github.com/sharq-dev/sharq/internal/jsonlite"
)

// decodeFast reads a usual request without reflection and reports whether
// it could: members as Request names them, each once, no nulls, no
// InstanceGroups, InputDataConfig or OutputDataConfig, strings without \u
// escapes, counts of at most 9 digits; members Request does not declare
// are checked as JSON and skipped. Anything else, an error included, is
// left to
// json.Unmarshal, whose results and errors stay the reference; on true,
// the request is what it would have decoded (FuzzDecodeFast checks it).
func decodeFast(b []byte) (*Request, bool) {
	r := jsonlite.Reader{B: b}
	var req Request
	r.Space()
	ok := object(&r, requestFields, func(i int) bool {
		switch requestFields[i] {
		case "TrainingJobName":
			return r.StrTo(&req.TrainingJobName)
		case "AlgorithmSpecification":
			return algorithm(&r, &req.AlgorithmSpecification)
		case "HyperParameters":
			return hyperParameters(&r, &req.HyperParameters)
		case "Environment":
			return stringMap(&r, &req.Environment)
		case "CheckpointConfig":
			return object(&r, checkpointFields, func(i int) bool {
				if i == 0 {
					return r.StrTo(&req.CheckpointConfig.LocalPath)
				}
				return r.StrTo(&req.CheckpointConfig.S3Uri)
			})
		case "ResourceConfig":
			req.ResourceConfig = &ResourceConfig{}
			return resource(&r, req.ResourceConfig)
		case "StoppingCondition":
			return object(&r, stoppingFields, func(int) bool {
				n, ok := r.Int()
				req.StoppingCondition.MaxRuntimeInSeconds = int64(n)
				return ok
			})
		}
		return false // InputDataConfig, OutputDataConfig
	})
	if !ok || !r.End() {
		return nil, false
	}
	return &req, true
}

// The members each object declares, as encoding/json matches them.
var (
	requestFields    = []string{"TrainingJobName", "AlgorithmSpecification", "HyperParameters", "Environment", "InputDataConfig", "CheckpointConfig", "ResourceConfig", "StoppingCondition", "OutputDataConfig"}
	algorithmFields  = []string{"TrainingImage", "TrainingInputMode", "ContainerEntrypoint", "ContainerArguments"}
	resourceFields   = []string{"InstanceType", "InstanceCount", "InstanceGroups"}
	checkpointFields = []string{"LocalPath", "S3Uri"}
	stoppingFields   = []string{"MaxRuntimeInSeconds"}
)

// object reads an object whose declared members are fields: member reads
// the value of fields[i]. A member seen twice, or one whose name matches
// a field only as encoding/json folds case, is left to encoding/json;
// other members are checked and skipped.
func object(r *jsonlite.Reader, fields []string, member func(i int) bool) bool {
	var seen uint32
	return r.Each('{', '}', func() bool {
		i, ok := r.Member(fields)
		switch {
		case !ok:
			return false
		case i < 0:
			return r.SkipValue()
		case seen&(1<<i) != 0:
			return false
		}
		seen |= 1 << i
		return member(i)
	})
}

func algorithm(r *jsonlite.Reader, a *AlgorithmSpecification) bool {
	return object(r, algorithmFields, func(i int) bool {
		switch i {
		case 0:
			return r.StrTo(&a.TrainingImage)
		case 1:
			return r.StrTo(&a.TrainingInputMode)
		case 2:
			return stringList(r, &a.ContainerEntrypoint)
		}
		return stringList(r, &a.ContainerArguments)
	})
}

func resource(r *jsonlite.Reader, rc *ResourceConfig) bool {
	return object(r, resourceFields, func(i int) bool {
		switch i {
		case 0:
			return r.StrTo(&rc.InstanceType)
		case 1:
			n, ok := r.Int()
			rc.InstanceCount = &n
			return ok
		}
		return false // InstanceGroups
	})
}

// stringList reads an array of strings.
func stringList(r *jsonlite.Reader, dst *[]string) bool {
	out := []string{}
	ok := r.Each('[', ']', func() bool {
		s, ok := r.Str()
		out = append(out, s)
		return ok
	})
	*dst = out
	return ok
}

// members reads an object of any member names, value reading each value;
// a name seen twice is left to encoding/json.
func members(r *jsonlite.Reader, value func(key string) bool) bool {
	return r.Each('{', '}', func() bool {
		key, ok := r.Str()
		if !ok {
			return false
		}
		r.Space()
		if !r.Skip(':') {
			return false
		}
		r.Space()
		return value(key)
	})
}

func stringMap(r *jsonlite.Reader, dst *map[string]string) bool {
	m := map[string]string{}
	*dst = m
	return members(r, func(key string) bool {
		if _, dup := m[key]; dup {
			return false
		}
		s, ok := r.Str()
		m[key] = s
		return ok
	})
}

func hyperParameters(r *jsonlite.Reader, dst *HyperParameters) bool {
	m := HyperParameters{}
	*dst = m
	return members(r, func(key string) bool {
		if _, dup := m[key]; dup {
			return false
		}
		start := r.I
		if !r.SkipValue() {
			return false
		}
		m[key] = json.RawMessage(slices.Clone(r.B[start:r.I]))
		return true
	})
}
