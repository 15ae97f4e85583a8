package engine

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// FuzzDemandOf feeds arbitrary serviceRequestPayloads to readPayload. A
// refused payload gets an Invalid error with a message and no demand; an
// accepted one a demand of distinct SageMaker instance types with positive
// counts, each the exact sum of what the payload asks for of its type.
func FuzzDemandOf(f *testing.F) {
	for _, s := range []string{
		`{"TrainingJobName":"t","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2,"VolumeSizeInGB":10}}`,
		`{"ResourceConfig":{"InstanceType":"ml.p4d.24xlarge"}}`,
		`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":1,"InstanceGroupName":"a"},` +
			`{"InstanceType":"ml.m5.large","InstanceCount":2,"InstanceGroupName":"b"},{"InstanceType":"ml.g5.xlarge","InstanceCount":3,"InstanceGroupName":"c"}]}}`,
		`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":0}}`,
		`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":-1}}`,
		`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1.5}}`,
		`{"ResourceConfig":{"InstanceType":"g5.xlarge","InstanceCount":1}}`,
		`{"ResourceConfig":{"InstanceType":"","InstanceGroups":[]}}`,
		`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.g5.xlarge","InstanceCount":0}]}}`,
		`{"ResourceConfig":null}`,
		`{"TrainingJobName":"t"}`,
		`{"resourceconfig":{"instancetype":"ml.g5.xlarge","instancecount":1}}`,
		`[]`,
		`null`,
		``,
		`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":9223372036854775807}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		_, demand, err := readPayload(payload, nil)
		if err != nil {
			if ErrorCode(err) != Invalid || ErrorMessage(err) == "" || demand != nil {
				t.Fatalf("refused with %v (code %s), demand %v", err, ErrorCode(err), demand)
			}
			return
		}
		if len(demand) == 0 {
			t.Fatalf("accepted with no demand")
		}
		want := referenceDemand(t, payload)
		seen := map[string]bool{}
		for _, u := range demand {
			if !trainingjob.ValidInstanceType(u.Unit) || u.Count < 1 || seen[u.Unit] {
				t.Fatalf("demand %v: %q is not a distinct instance type with a positive count", demand, u.Unit)
			}
			seen[u.Unit] = true
			if w := want[u.Unit]; w == nil || w.Cmp(big.NewInt(int64(u.Count))) != 0 {
				t.Fatalf("demand %v: %s × %d, but the payload asks for %v", demand, u.Unit, u.Count, w)
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("demand %v, but the payload asks for %v", demand, want)
		}
		if got := capacityUsage(demand); len(got) != len(demand) {
			t.Fatalf("capacity usage %v of demand %v", got, demand)
		}
	})
}

// referenceDemand sums what an accepted payload asks for per instance type
// in arbitrary precision.
func referenceDemand(t *testing.T, payload string) map[string]*big.Int {
	var req struct {
		ResourceConfig struct {
			InstanceType   string
			InstanceCount  *json.Number
			InstanceGroups []struct {
				InstanceType  string
				InstanceCount json.Number
			}
		}
	}
	if err := json.Unmarshal([]byte(payload), &req); err != nil {
		t.Fatalf("accepted, but does not decode: %v", err)
	}
	count := func(n json.Number) *big.Int {
		v, ok := new(big.Int).SetString(n.String(), 10)
		if !ok {
			t.Fatalf("accepted with InstanceCount %q", n)
		}
		return v
	}
	out := map[string]*big.Int{}
	rc := req.ResourceConfig
	if len(rc.InstanceGroups) == 0 {
		out[rc.InstanceType] = big.NewInt(1)
		if rc.InstanceCount != nil {
			out[rc.InstanceType] = count(*rc.InstanceCount)
		}
		return out
	}
	for _, g := range rc.InstanceGroups {
		if out[g.InstanceType] == nil {
			out[g.InstanceType] = new(big.Int)
		}
		out[g.InstanceType].Add(out[g.InstanceType], count(g.InstanceCount))
	}
	return out
}
