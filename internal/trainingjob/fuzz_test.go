package trainingjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sameJSON compares hyperparameter values by meaning: Marshal compacts
// them.
var sameJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
})

// FuzzParse checks that Parse never panics, that what it refuses comes
// with a reason, that a demand it grants is valid, and that a parsed
// request marshals to one that parses to the same request and demand;
// and that CheckSubmission refuses only with a reason, and passes the
// marshalled form of a request it passed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		full,
		`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2}}`,
		`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.p4d.24xlarge","InstanceCount":2},{"InstanceType":"ml.p4d.24xlarge","InstanceCount":1}]}}`,
		`{"resourceconfig":{"instancetype":"ml.g5.xlarge"},"ResourceConfig":{"VolumeSizeInGB":5}}`,
		`{"ResourceConfig":{"InstanceType":"gpu","InstanceCount":0}}`,
		`{"ResourceConfig":{"InstanceCount":"2"}}`,
		`{"Environment":{"A":1},"HyperParameters":{"a": [1, 2]}}`,
		`{"CheckpointConfig":{"S3Uri":"s3://b"},"InputDataConfig":[{"DataSource":{"S3DataSource":{}}}]}`,
		`{"HyperParameters":{},"Environment":{},"InputDataConfig":[]}`,
		`{"ResourceConfig":{"InstanceTyp":"ml.g5.xlarge"},"InputDataConfig":[{"InputMode":"Pipe"}]}`,
		`{"AlgorithmSpecification":{"TrainingInputMode":"Pipe"},"HyperParameters":{"x\"y":"\\"}}`,
		`null`, `[]`, `5`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Reason == "" || !pe.Malformed {
				t.Fatalf("Parse error %#v", err)
			}
			return
		}
		cerr := r.CheckSubmission()
		if cerr != nil {
			var pe *Error
			if !errors.As(cerr, &pe) || pe.Reason == "" || pe.Malformed {
				t.Fatalf("CheckSubmission error %#v", cerr)
			}
		}
		demand, derr := r.Demand()
		if derr != nil {
			var pe *Error
			if !errors.As(derr, &pe) || pe.Reason == "" {
				t.Fatalf("Demand error %#v", derr)
			}
		}
		seen := map[string]bool{}
		for _, in := range demand {
			if !ValidInstanceType(in.Type) || in.Count < 1 || seen[in.Type] {
				t.Fatalf("Demand = %v", demand)
			}
			seen[in.Type] = true
		}
		out, err := r.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal) of %s: %v", out, err)
		}
		if diff := cmp.Diff(r, again, ignoreRaw, sameJSON, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Parse(Marshal(%s)) = %s (-first +again):\n%s", b, out, diff)
		}
		if err := again.CheckSubmission(); cerr == nil && err != nil {
			t.Fatalf("CheckSubmission passed %s but refuses Marshal's %s: %v", b, out, err)
		}
		demand2, derr2 := again.Demand()
		if !cmp.Equal(demand, demand2) || (derr == nil) != (derr2 == nil) || (derr != nil && derr.Error() != derr2.Error()) {
			t.Fatalf("Demand after Marshal: %v %v, was %v %v", demand2, derr2, demand, derr)
		}
	})
}
