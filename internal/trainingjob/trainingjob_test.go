package trainingjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func ptr[T any](v T) *T { return &v }

// full is a request with every field sharq reads and some it does not.
const full = `{
	"TrainingJobName": "resnet",
	"RoleArn": "arn:aws:iam::123456789012:role/sm",
	"AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File",
		"ContainerEntrypoint": ["python"], "ContainerArguments": ["train.py", "--epochs", "3"],
		"MetricDefinitions": [{"Name": "loss", "Regex": "loss=(.*)"}]},
	"HyperParameters": {"lr": "0.1", "epochs": 3, "deep": true},
	"Environment": {"A": "1"},
	"InputDataConfig": [
		{"ChannelName": "train", "ContentType": "text/csv", "DataSource": {"S3DataSource": {"S3Uri": "file:///data/train", "S3DataType": "S3Prefix"}}},
		{"ChannelName": "fsx", "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-1", "DirectoryPath": "/fsx/data"}}}
	],
	"CheckpointConfig": {"LocalPath": "/ckpt", "S3Uri": "s3://b/ckpt"},
	"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
	"StoppingCondition": {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}
}`

var ignoreRaw = cmpopts.IgnoreUnexported(Request{})

// Ensure Parse reads every field sharq uses.
func TestParse(t *testing.T) {
	r, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	want := &Request{
		TrainingJobName: "resnet",
		AlgorithmSpecification: AlgorithmSpecification{TrainingImage: "img:1", TrainingInputMode: "File",
			ContainerEntrypoint: []string{"python"}, ContainerArguments: []string{"train.py", "--epochs", "3"}},
		HyperParameters: HyperParameters{"lr": json.RawMessage(`"0.1"`), "epochs": json.RawMessage(`3`), "deep": json.RawMessage(`true`)},
		Environment:     map[string]string{"A": "1"},
		InputDataConfig: []Channel{
			{ChannelName: "train", ContentType: "text/csv", DataSource: DataSource{S3DataSource: &S3DataSource{S3Uri: "file:///data/train", S3DataType: "S3Prefix"}}},
			{ChannelName: "fsx", DataSource: DataSource{FileSystemDataSource: &FileSystemDataSource{DirectoryPath: "/fsx/data"}}},
		},
		CheckpointConfig:  CheckpointConfig{LocalPath: "/ckpt", S3Uri: "s3://b/ckpt"},
		ResourceConfig:    &ResourceConfig{InstanceType: "ml.g5.xlarge", InstanceCount: ptr(2)},
		StoppingCondition: StoppingCondition{MaxRuntimeInSeconds: 3600},
	}
	if diff := cmp.Diff(want, r, ignoreRaw); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if got, want := r.HyperParameters.Strings(), map[string]string{"lr": "0.1", "epochs": "3", "deep": "true"}; !cmp.Equal(got, want) {
		t.Errorf("HyperParameters.Strings() = %v, want %v", got, want)
	}
}

// ParseString reads what Parse reads, and fails as it does.
func TestParseString(t *testing.T) {
	for _, payload := range []string{full, `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`, `[1]`, `{"Environment":{"A":1}}`, `{`} {
		want, wantErr := Parse([]byte(payload))
		got, err := ParseString(payload)
		if !cmp.Equal(want, got, cmp.AllowUnexported(Request{})) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("ParseString(%s) = %+v, %v; Parse gives %+v, %v", payload, got, err, want, wantErr)
		}
	}
}

// Ensure Demand reads the instance type and count, defaulting the count to
// one, and sums instance groups per type in first-seen order, groups
// winning over InstanceType.
func TestDemand(t *testing.T) {
	tests := map[string]struct {
		payload string
		want    []Instances
	}{
		"TypeAndCount": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":3}}`, []Instances{{"ml.g5.xlarge", 3}}},
		"DefaultCount": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`, []Instances{{"ml.g5.xlarge", 1}}},
		"NullCount":    {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":null}}`, []Instances{{"ml.g5.xlarge", 1}}},
		"Groups": {`{"ResourceConfig":{"InstanceType":"ml.m5.large","InstanceCount":9,"InstanceGroups":[
			{"InstanceType":"ml.p4d.24xlarge","InstanceCount":2,"InstanceGroupName":"a"},
			{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"InstanceGroupName":"b"},
			{"InstanceType":"ml.p4d.24xlarge","InstanceCount":3,"InstanceGroupName":"c"}]}}`,
			[]Instances{{"ml.p4d.24xlarge", 5}, {"ml.g5.xlarge", 1}}},
		"EmptyGroups": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceGroups":[]}}`, []Instances{{"ml.g5.xlarge", 1}}},
		"CaseFolded":  {`{"resourceConfig":{"instanceType":"ml.g5.xlarge","instanceCount":2}}`, []Instances{{"ml.g5.xlarge", 2}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Parse([]byte(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if !r.HasInstanceType() {
				t.Error("HasInstanceType = false")
			}
			got, err := r.Demand()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Demand (-want +got):\n%s", diff)
			}
		})
	}
}

// Ensure every refusal says what is wrong in the payload's terms, and
// which kind of refusal it is.
func TestRefused(t *testing.T) {
	tests := map[string]struct {
		payload   string
		want      string
		malformed bool
	}{
		"Truncated":  {`{"ResourceConfig":`, "unexpected end of JSON input", true},
		"Syntax":     {`{"ResourceConfig" 1}`, "invalid character '1' after object key", true},
		"Empty":      {``, "unexpected end of JSON input", true},
		"Array":      {`[]`, "a CreateTrainingJob request is a JSON object, not an array", true},
		"Number":     {`5`, "a CreateTrainingJob request is a JSON object, not a number", true},
		"String":     {`"x"`, "a CreateTrainingJob request is a JSON object, not a string", true},
		"CountType":  {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":"2"}}`, "ResourceConfig.InstanceCount must be an integer, not a string", true},
		"CountFloat": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1.5}}`, "ResourceConfig.InstanceCount must be an integer, not 1.5", true},
		"CountHuge":  {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1e400}}`, "ResourceConfig.InstanceCount must be an integer, not 1e400", true},
		"TypeBool":   {`{"ResourceConfig":{"InstanceType":true}}`, "ResourceConfig.InstanceType must be a string, not a boolean", true},
		"RCNumber":   {`{"ResourceConfig":5}`, "ResourceConfig must be an object, not a number", true},
		"GroupCount": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":1.5}]}}`,
			"ResourceConfig.InstanceGroups[].InstanceCount must be an integer, not 1.5", true},
		"GroupNumber":     {`{"ResourceConfig":{"InstanceGroups":[5]}}`, "each item of ResourceConfig.InstanceGroups must be an object, not a number", true},
		"EnvValue":        {`{"Environment":{"A":1}}`, "each value of Environment must be a string, not a number", true},
		"EnvArray":        {`{"Environment":[]}`, "Environment must be an object, not an array", true},
		"HyperParameters": {`{"HyperParameters":"lr=1"}`, "HyperParameters must be an object, not a string", true},
		"Entrypoint":      {`{"AlgorithmSpecification":{"ContainerEntrypoint":"python"}}`, "AlgorithmSpecification.ContainerEntrypoint must be an array, not a string", true},
		"EntrypointItem":  {`{"AlgorithmSpecification":{"ContainerEntrypoint":[1]}}`, "each item of AlgorithmSpecification.ContainerEntrypoint must be a string, not a number", true},
		"Channel":         {`{"InputDataConfig":[{"ChannelName":7}]}`, "InputDataConfig[].ChannelName must be a string, not a number", true},
		"ChannelURI":      {`{"InputDataConfig":[{"DataSource":{"S3DataSource":{"S3Uri":[]}}}]}`, "InputDataConfig[].DataSource.S3DataSource.S3Uri must be a string, not an array", true},
		"MaxRuntime":      {`{"StoppingCondition":{"MaxRuntimeInSeconds":"1h"}}`, "StoppingCondition.MaxRuntimeInSeconds must be an integer, not a string", true},
		"Checkpoint":      {`{"CheckpointConfig":{"LocalPath":false}}`, "CheckpointConfig.LocalPath must be a string, not a boolean", true},
		"Name":            {`{"TrainingJobName":{}}`, "TrainingJobName must be a string, not an object", true},

		"NoResourceConfig":   {`{"TrainingJobName":"x"}`, "ResourceConfig is required", true},
		"NullResourceConfig": {`{"ResourceConfig":null}`, "ResourceConfig is required", true},
		"Null":               {`null`, "ResourceConfig is required", true},
		"NoType":             {`{"ResourceConfig":{"InstanceCount":1}}`, "ResourceConfig.InstanceType is required", false},
		"BadType":            {`{"ResourceConfig":{"InstanceType":"gpu"}}`, `ResourceConfig.InstanceType "gpu" is not a SageMaker Training instance type`, false},
		"ZeroCount":          {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":0}}`, "ResourceConfig.InstanceCount must be at least 1", false},
		"NegativeCount":      {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":-2}}`, "ResourceConfig.InstanceCount must be at least 1", false},
		"GroupBadType": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":1},{"InstanceType":"g5","InstanceCount":1}]}}`,
			`ResourceConfig.InstanceGroups[].InstanceType "g5" is not a SageMaker Training instance type`, false},
		"GroupZero": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge"}]}}`, "ResourceConfig.InstanceGroups[].InstanceCount must be at least 1", false},
		"HugeCount": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2147483648}}`, "ResourceConfig.InstanceCount must be at most 2147483647", false},
		"GroupHuge": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":9223372036854775807}]}}`,
			"ResourceConfig.InstanceGroups[].InstanceCount must be at most 2147483647", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Parse([]byte(tc.payload))
			if err == nil {
				_, err = r.Demand()
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if pe.Reason != tc.want || pe.Malformed != tc.malformed {
				t.Errorf("got %q (malformed %t), want %q (malformed %t)", pe.Reason, pe.Malformed, tc.want, tc.malformed)
			}
		})
	}
}

// Ensure an error reads as the payload's field, and can be named as an
// API names it.
func TestErrorText(t *testing.T) {
	malformed := &Error{Malformed: true, Reason: "ResourceConfig is required"}
	if got, want := malformed.Error(), "payload is not a valid CreateTrainingJob request: ResourceConfig is required"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := malformed.Named("serviceRequestPayload"), "serviceRequestPayload is not a valid CreateTrainingJob request: ResourceConfig is required"; got != want {
		t.Errorf("Named() = %q, want %q", got, want)
	}
	wrong := &Error{Reason: "ResourceConfig.InstanceCount must be at least 1"}
	if got, want := wrong.Named("serviceRequestPayload"), "serviceRequestPayload: ResourceConfig.InstanceCount must be at least 1"; got != want {
		t.Errorf("Named() = %q, want %q", got, want)
	}
}

// Ensure a request built in Go marshals in field order with only what is
// set.
func TestMarshalNew(t *testing.T) {
	b, err := New("ml.g5.xlarge", 2).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2}}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	r := &Request{TrainingJobName: "t", AlgorithmSpecification: AlgorithmSpecification{ContainerEntrypoint: []string{"true"}},
		Environment: map[string]string{"B": "2", "A": "1"}}
	b, err = r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"TrainingJobName":"t","AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"Environment":{"A":"1","B":"2"}}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}

// Ensure a parsed request, edited, marshals with everything it did not
// declare kept in place and its edits applied.
func TestMarshalKeepsTheRest(t *testing.T) {
	r, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	r.ResourceConfig.InstanceCount = ptr(4)
	r.Environment["B"] = "2"
	r.AlgorithmSpecification.ContainerArguments = nil
	r.CheckpointConfig.LocalPath = ""
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"AlgorithmSpecification":{"ContainerEntrypoint":["python"],` +
		`"MetricDefinitions":[{"Name":"loss","Regex":"loss=(.*)"}],"TrainingImage":"img:1","TrainingInputMode":"File"},` +
		`"CheckpointConfig":{"S3Uri":"s3://b/ckpt"},` +
		`"Environment":{"A":"1","B":"2"},` +
		`"HyperParameters":{"deep":true,"epochs":3,"lr":"0.1"},` +
		`"InputDataConfig":[{"ChannelName":"train","ContentType":"text/csv","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"file:///data/train"}}},` +
		`{"ChannelName":"fsx","DataSource":{"FileSystemDataSource":{"DirectoryPath":"/fsx/data","FileSystemId":"fs-1"}}}],` +
		`"ResourceConfig":{"InstanceCount":4,"InstanceType":"ml.g5.xlarge","VolumeSizeInGB":50},` +
		`"RoleArn":"arn:aws:iam::123456789012:role/sm",` +
		`"StoppingCondition":{"MaxRuntimeInSeconds":3600,"MaxWaitTimeInSeconds":7200},` +
		`"TrainingJobName":"resnet"}`
	if string(b) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", b, want)
	}
	// Numbers it does not declare stay as written.
	r, err = Parse([]byte(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","VolumeSizeInGB":1e2},"Big":12345678901234567890123}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := r.Marshal(); string(b) != `{"Big":12345678901234567890123,"ResourceConfig":{"InstanceType":"ml.g5.xlarge","VolumeSizeInGB":1e2}}` {
		t.Errorf("Marshal = %s", b)
	}
}

// Ensure a parsed null or empty object marshals as an object and edits
// apply to it.
func TestMarshalEmpty(t *testing.T) {
	for _, in := range []string{`null`, `{}`} {
		r, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		r.ResourceConfig = &ResourceConfig{InstanceType: "ml.g5.xlarge"}
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`; got != want {
			t.Errorf("%s: Marshal = %s, want %s", in, got, want)
		}
	}
}

func TestStopGrace(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want time.Duration
		ok   bool
		err  bool
	}{
		{nil, 0, false, false},
		{map[string]string{StopGraceEnv: "30"}, 30 * time.Second, true, false},
		{map[string]string{StopGraceEnv: " 0.5 "}, 500 * time.Millisecond, true, false},
		{map[string]string{StopGraceEnv: "0"}, 0, true, false},
		{map[string]string{StopGraceEnv: "-1"}, 0, false, true},
		{map[string]string{StopGraceEnv: "NaN"}, 0, false, true},
		{map[string]string{StopGraceEnv: "1e300"}, 0, false, true},
		{map[string]string{StopGraceEnv: "soon"}, 0, false, true},
	} {
		r := &Request{Environment: c.env}
		got, ok, err := r.StopGrace()
		if got != c.want || ok != c.ok || (err != nil) != c.err {
			t.Errorf("StopGrace(%v) = %v, %v, %v", c.env, got, ok, err)
		}
	}
}
