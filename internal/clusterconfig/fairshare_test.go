package clusterconfig_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
)

// Ensure the fair-share example parses, round-trips, applies to an engine
// whose queue then requires share identifiers.
func TestFairShareExample(t *testing.T) {
	c, err := clusterconfig.Load("../../examples/fair-share.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, remarshalled(t, c)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	e := applied(t, c)
	_, err = e.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: "x", JobQueue: "fair-jq", ServiceJobType: "SAGEMAKER_TRAINING",
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`})
	if err == nil || !strings.Contains(err.Error(), "shareIdentifier must be specified") {
		t.Errorf("a job without a share identifier: %v", err)
	}
}

const fairBase = `
schedulingPolicies:
  - name: p
    fairsharePolicy:
      shareDecaySeconds: 3600
      shareDistribution: [{shareIdentifier: "a*", weightFactor: 0.5}]
serviceEnvironments: [{name: se, capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]}]
jobQueues:
  - name: q
    schedulingPolicy: p
    serviceEnvironments: [se]
`

// Ensure each mistake in a fair-share policy is caught with its field.
func TestValidateFairShare(t *testing.T) {
	cases := map[string]struct {
		old, new string
		field    string
		err      error
	}{
		"BothKinds":   {"  - name: p\n", "  - name: p\n    quotaSharePolicy: {}\n", "schedulingPolicies[0].fairsharePolicy", clusterconfig.ErrRange},
		"Decay":       {"3600", "604801", "schedulingPolicies[0].fairsharePolicy.shareDecaySeconds", clusterconfig.ErrRange},
		"Reservation": {"shareDecaySeconds: 3600", "shareDecaySeconds: 3600\n      computeReservation: 100", "schedulingPolicies[0].fairsharePolicy.computeReservation", clusterconfig.ErrRange},
		"Weight":      {"weightFactor: 0.5", "weightFactor: 0", "schedulingPolicies[0].fairsharePolicy.shareDistribution[0].weightFactor", clusterconfig.ErrRange},
		"Overlap": {"weightFactor: 0.5}]", "weightFactor: 0.5}, {shareIdentifier: a-1}]",
			"schedulingPolicies[0].fairsharePolicy.shareDistribution[1].shareIdentifier", clusterconfig.ErrDuplicate},
		"SharedEnv": {"    serviceEnvironments: [se]\n", "    serviceEnvironments: [se]\n  - name: other\n    serviceEnvironments: [se]\n",
			"jobQueues[0].serviceEnvironments[0]", clusterconfig.ErrDuplicate},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(fairBase, c.old, c.new, 1)
			if in == fairBase {
				t.Fatalf("case does not change the base config")
			}
			_, err := clusterconfig.Parse(strings.NewReader(in))
			var fe *clusterconfig.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, c.err) {
				t.Errorf("err = %v, want %v in %s", err, c.err, c.field)
			}
		})
	}
	if _, err := clusterconfig.Parse(strings.NewReader(fairBase)); err != nil {
		t.Errorf("base config: %v", err)
	}
}
