package sim

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/record"
)

// FuzzRuntimeOf feeds arbitrary payloads of a job that has not succeeded
// to declaredRuntime: its runtime is exactly the payload's MaxRuntimeInSeconds
// when that is positive and fits a time.Duration, else DefaultRuntime as a
// guess.
func FuzzRuntimeOf(f *testing.F) {
	for _, s := range []string{
		`{"TrainingJobName":"t","StoppingCondition":{"MaxRuntimeInSeconds":90},"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":0}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":-1}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":1.5}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":18446744074}}`,
		`{"StoppingCondition":null}`,
		`[]`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		d, ok := declaredRuntime(batchapi.ServiceJob{Status: record.StatusRunning, ServiceRequestPayload: payload})
		if !ok {
			if d != DefaultRuntime {
				t.Fatalf("a guess of %s, not DefaultRuntime", d)
			}
			return
		}
		var p struct {
			StoppingCondition struct{ MaxRuntimeInSeconds json.Number }
		}
		if err := json.Unmarshal([]byte(payload), &p); err != nil {
			t.Fatalf("runtime %s from a payload that does not decode: %v", d, err)
		}
		secs, valid := new(big.Int).SetString(p.StoppingCondition.MaxRuntimeInSeconds.String(), 10)
		if !valid || secs.Sign() <= 0 {
			t.Fatalf("runtime %s from MaxRuntimeInSeconds %q", d, p.StoppingCondition.MaxRuntimeInSeconds)
		}
		want := new(big.Int).Mul(secs, big.NewInt(int64(time.Second)))
		if want.Cmp(big.NewInt(math.MaxInt64)) > 0 || want.Cmp(big.NewInt(int64(d))) != 0 {
			t.Fatalf("runtime %s from MaxRuntimeInSeconds %s", d, secs)
		}
	})
}
