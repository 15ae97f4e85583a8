package trainingjob

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Var is one environment variable.
type Var struct{ Name, Value string }

// ToolkitVars are the SageMaker training toolkit's variables that come from
// the request, in a stable order: TRAINING_JOB_NAME, SM_HPS and SM_HP_*,
// SM_CHANNELS and SM_CHANNEL_*. channels maps each input channel to its
// path where the job runs. The variables of a host (SM_HOSTS,
// SM_CURRENT_HOST, directories, CPUs and GPUs) are the executor's.
func (r *Request) ToolkitVars(jobName string, channels map[string]string) []Var {
	hps := r.HyperParameters.Strings()
	vars := []Var{{"TRAINING_JOB_NAME", jobName}, {"SM_HPS", JSONString(hps)}}
	for _, k := range slices.Sorted(maps.Keys(hps)) {
		vars = append(vars, Var{"SM_HP_" + strings.ToUpper(k), hps[k]})
	}
	names := slices.Sorted(maps.Keys(channels))
	vars = append(vars, Var{"SM_CHANNELS", JSONString(names)})
	for _, k := range names {
		vars = append(vars, Var{"SM_CHANNEL_" + strings.ToUpper(k), channels[k]})
	}
	return vars
}

// JSONString is v in JSON, as the toolkit's list and map variables are.
func JSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
