package engine

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Ensure a job's demand is its instance type × count, or its instance
// groups summed per type in first-seen order.
func TestDemandOf(t *testing.T) {
	tests := map[string]struct {
		payload string
		want    []record.UnitCount
	}{
		"Type":         {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2,"VolumeSizeInGB":10}}`, []record.UnitCount{{Unit: "ml.g5.xlarge", Count: 2}}},
		"DefaultCount": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`, []record.UnitCount{{Unit: "ml.g5.xlarge", Count: 1}}},
		"Groups": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.p4d.24xlarge","InstanceCount":2,"InstanceGroupName":"a"},
			{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"InstanceGroupName":"b"},{"InstanceType":"ml.p4d.24xlarge","InstanceCount":1,"InstanceGroupName":"c"}]}}`,
			[]record.UnitCount{{Unit: "ml.p4d.24xlarge", Count: 3}, {Unit: "ml.g5.xlarge", Count: 1}}},
	}
	for name, tc := range tests {
		_, got, err := readPayload(tc.payload, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: demand (-want +got):\n%s", name, diff)
		}
	}
}

// Ensure a payload that does not say what it needs is refused as invalid,
// with the texts clients see.
func TestDemandOfRefused(t *testing.T) {
	tests := map[string]struct{ payload, want string }{
		"BadJSON":     {`{"ResourceConfig":`, "serviceRequestPayload is not a valid CreateTrainingJob request: unexpected end of JSON input"},
		"NoResources": {`{"TrainingJobName":"x"}`, "serviceRequestPayload is not a valid CreateTrainingJob request: ResourceConfig is required"},
		"WrongType": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":"2"}}`,
			"serviceRequestPayload is not a valid CreateTrainingJob request: ResourceConfig.InstanceCount must be an integer, not a string"},
		"NoType":    {`{"ResourceConfig":{"InstanceCount":1}}`, "serviceRequestPayload: ResourceConfig.InstanceType is required"},
		"BadType":   {`{"ResourceConfig":{"InstanceType":"gpu"}}`, `serviceRequestPayload: ResourceConfig.InstanceType "gpu" is not a SageMaker Training instance type`},
		"ZeroCount": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":0}}`, "serviceRequestPayload: ResourceConfig.InstanceCount must be at least 1"},
		"GroupType": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"g5","InstanceCount":1}]}}`,
			`serviceRequestPayload: ResourceConfig.InstanceGroups[].InstanceType "g5" is not a SageMaker Training instance type`},
		"GroupCount": {`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":0}]}}`,
			"serviceRequestPayload: ResourceConfig.InstanceGroups[].InstanceCount must be at least 1"},
		"UnknownField": {`{"ResourceConfig":{"InstanceTyp":"ml.g5.xlarge"}}`,
			`serviceRequestPayload: unknown field "ResourceConfig.InstanceTyp" (CreateTrainingJob has no such field; did you mean "InstanceType"?)`},
		// An unknown name is said before what it leaves missing.
		"MisspelledSection": {`{"ResourceConfg":{"InstanceType":"ml.g5.xlarge"}}`,
			`serviceRequestPayload: unknown field "ResourceConfg" (CreateTrainingJob has no such field; did you mean "ResourceConfig"?)`},
		"Pipe": {`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"},"InputDataConfig":[{"ChannelName":"train","InputMode":"Pipe"}]}`,
			"serviceRequestPayload: InputDataConfig[0].InputMode is Pipe, which sharq does not support; use File or FastFile"},
	}
	for name, tc := range tests {
		_, _, err := readPayload(tc.payload, nil)
		if ErrorCode(err) != Invalid || ErrorMessage(err) != tc.want {
			t.Errorf("%s: %s %q, want invalid %q", name, ErrorCode(err), ErrorMessage(err), tc.want)
		}
	}
}

// Ensure a payload the caller parsed already is not parsed again: its
// request is the one read, and the one a later submission of the same
// payload is handed.
func TestReadPayloadTakesCallersParse(t *testing.T) {
	payload := `{"TrainingJobName":"TestReadPayloadTakesCallersParse","ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`
	// A parse of another payload tells the one given from one made here.
	given, err := trainingjob.ParseString(`{"ResourceConfig":{"InstanceType":"ml.p4d.24xlarge","InstanceCount":3}}`)
	if err != nil {
		t.Fatal(err)
	}
	req, demand, err := readPayload(payload, given)
	if err != nil {
		t.Fatal(err)
	}
	if want := []record.UnitCount{{Unit: "ml.p4d.24xlarge", Count: 3}}; req != given || !slices.Equal(demand, want) {
		t.Errorf("read %p with demand %v, want the request given (%p) and its demand %v", req, demand, given, want)
	}
	if again, _, err := readPayload(payload, nil); err != nil || again != given {
		t.Errorf("the payload submitted again read as %p (%v), want the first reading %p", again, err, given)
	}
}
