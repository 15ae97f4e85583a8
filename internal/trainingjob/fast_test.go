package trainingjob

import (
	"cmp"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// fastSeeds are payloads as clients write them, and near misses that the
// fast path must leave to encoding/json.
var fastSeeds = []struct {
	payload string
	fast    bool
}{
	{`{"TrainingJobName":"load-1","RoleArn":"arn:aws:iam::000000000000:role/sharq-load","AlgorithmSpecification":{"TrainingImage":"sharq-load","TrainingInputMode":"File"},"ResourceConfig":{"InstanceType":"ml.m5.large","InstanceCount":1,"VolumeSizeInGB":1},"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"200"}}`, true},
	{full, false}, // InputDataConfig
	{` { "AlgorithmSpecification" : { "ContainerEntrypoint" : ["sh", "-c"], "ContainerArguments": [] } , "HyperParameters" : {"a": "1", "b": [1, {"c": null}], "d": true} ,
		"StoppingCondition": {"MaxRuntimeInSeconds": 3600}, "CheckpointConfig": {"LocalPath": "/opt/ml/checkpoints"}, "Tags": [{"Key": "k", "Value": "v"}] } `, true},
	{`{}`, true},
	{`{"HyperParameters":{},"Environment":{}}`, true},
	{`{"resourceconfig":{"instancetype":"ml.g5.xlarge"},"ResourceConfig":{"VolumeSizeInGB":5}}`, false},
	{`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"},"ResourceConfig":{"VolumeSizeInGB":5}}`, false},
	{`{"ResourceConfig":{"instanceType":"ml.g5.xlarge"}}`, false},
	{`{"Environment":{"A":"1","A":"2"}}`, false},
	{`{"ResourceConfig":null}`, false},
	{`{"ResourceConfig":{"InstanceCount":"2"}}`, false},
	{`{"ResourceConfig":{"InstanceCount":1.0}}`, false},
	{`{"ResourceConfig":{"InstanceGroups":[]}}`, false},
	{`{"RoleArn":"\u0041"}`, false},
	{`{"VolumeSizeInGB":-1}`, false},
	{`{"TrainingJobName":"a"} {}`, false},
	{`null`, false},
	{``, false},
}

// FuzzDecodeFast checks that whatever the fast path reads, json.Unmarshal
// reads alike and without error.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s.payload))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeFast(b)
		if !ok {
			return
		}
		var slow Request
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fast path read %q, which json.Unmarshal refuses: %v", b, err)
		}
		if d := gocmp.Diff(&slow, fast, ignoreRaw); d != "" {
			t.Fatalf("fast path read %q differently (-json.Unmarshal +fast):\n%s", b, d)
		}
	})
}

func TestDecodeFastTakesUsualPayloads(t *testing.T) {
	for _, s := range fastSeeds {
		if _, got := decodeFast([]byte(s.payload)); got != s.fast {
			t.Errorf("decodeFast(%q) = %v, want %v", s.payload, got, s.fast)
		}
	}
}

// FuzzValidInstanceType checks the instance type check against the
// pattern it stands for.
func FuzzValidInstanceType(f *testing.F) {
	pattern := regexp.MustCompile(`^ml\.[a-z0-9-]+\.[a-z0-9-]+$`)
	for _, s := range []string{"ml.g5.xlarge", "ml.p4d.24xlarge", "ml..x", "ml.a.", "ml.a.b.c", "ML.g5.xlarge", "ml.g5.xlarge\n", "mlx.a.b", "ml.a-b.c-9", "gpu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidInstanceType(s), pattern.MatchString(s); got != want {
			t.Fatalf("ValidInstanceType(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}

// TestFastFieldsDeclared: each list of members decodeFast reads is the
// exported fields of its struct, in order, so that a field added to a
// struct is not skipped by decodeFast as a member the struct does not
// declare.
func TestFastFieldsDeclared(t *testing.T) {
	for _, c := range []struct {
		fields []string
		of     any
	}{
		{requestFields, Request{}},
		{algorithmFields, AlgorithmSpecification{}},
		{resourceFields, ResourceConfig{}},
		{checkpointFields, CheckpointConfig{}},
		{stoppingFields, StoppingCondition{}},
	} {
		var want []string
		typ := reflect.TypeOf(c.of)
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				want = append(want, cmp.Or(name, f.Name))
			}
		}
		if !slices.Equal(c.fields, want) {
			t.Errorf("decodeFast reads %v of %T, whose fields are %v", c.fields, c.of, want)
		}
	}
}
