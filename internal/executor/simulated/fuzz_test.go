package simulated

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// FuzzPlan feeds arbitrary payloads to plan. A payload that does not
// decode, or whose variables are not numbers, is an error; otherwise the
// runtime is SHARQ_SIMULATED_RUNTIME_MS milliseconds, else
// MaxRuntimeInSeconds seconds, else 0 (until stopped), exactly: never
// negative, and never a wrapped-around product.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{
		`{"TrainingJobName":"t","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"250"}}`,
		`{"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"0","SHARQ_SIMULATED_EXIT_CODE":"3"}}`,
		`{"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"-1"}}`,
		`{"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"soon"}}`,
		`{"Environment":{"SHARQ_SIMULATED_EXIT_CODE":"x"}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":3600}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":-5}}`,
		`{"StoppingCondition":{"MaxRuntimeInSeconds":1.5}}`,
		`{}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		run, code, err := plan(executor.Attempt{Payload: payload})
		if err != nil {
			if run != 0 || code != 0 || err.Error() == "" {
				t.Fatalf("refused with %v, yet runtime %s and exit code %d", err, run, code)
			}
			return
		}
		var pl struct {
			Environment       map[string]string
			StoppingCondition struct{ MaxRuntimeInSeconds json.Number }
		}
		if err := json.Unmarshal(payload, &pl); err != nil {
			t.Fatalf("accepted, but does not decode: %v", err)
		}
		want := new(big.Int)
		if v := pl.Environment["SHARQ_SIMULATED_RUNTIME_MS"]; v != "" {
			ms, ok := new(big.Int).SetString(v, 10)
			if !ok || ms.Sign() < 0 {
				t.Fatalf("accepted SHARQ_SIMULATED_RUNTIME_MS=%q", v)
			}
			want.Mul(ms, big.NewInt(int64(time.Millisecond)))
		} else if s := pl.StoppingCondition.MaxRuntimeInSeconds.String(); s != "" && !strings.HasPrefix(s, "-") {
			secs, ok := new(big.Int).SetString(s, 10)
			if !ok {
				t.Fatalf("accepted MaxRuntimeInSeconds %s", s)
			}
			if want.Mul(secs, big.NewInt(int64(time.Second))); want.Cmp(big.NewInt(math.MaxInt64)) > 0 {
				want.SetInt64(0) // beyond a time.Duration: until stopped
			}
		}
		if run < 0 || want.Cmp(big.NewInt(int64(run))) != 0 {
			t.Fatalf("runtime %s, want %s ns", run, want)
		}
	})
}
