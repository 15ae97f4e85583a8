package clusterconfig_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
)

// Ensure the announcement example parses, applies to an engine and gives
// the walkthrough's three shares.
func TestAnnouncementApplies(t *testing.T) {
	c, err := clusterconfig.Load("../../examples/announcement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := applied(t, c)
	var got []string
	for _, s := range e.Shares() {
		got = append(got, s.Queue+"/"+s.Share+" "+s.Strategy)
	}
	want := []string{
		"my-sm-training-qm-jq/QS1 LEND_AND_BORROW",
		"my-sm-training-qm-jq/QS2 LEND",
		"my-sm-training-qm-jq/QS3 RESERVE",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
}

// Ensure Marshal's output parses back to the same configuration.
func TestMarshalRoundTrip(t *testing.T) {
	c, err := clusterconfig.Load("../../examples/announcement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, remarshalled(t, c)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

const base = `
schedulingPolicies: [{name: p, quotaSharePolicy: {}}]
serviceEnvironments: [{name: se, capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]}]
jobQueues:
  - name: q
    schedulingPolicy: p
    serviceEnvironments: [se]
    quotaShares:
      - name: a
        capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
        resourceSharingConfiguration: {strategy: LEND}
`

// Ensure each kind of mistake is caught with the field it is in.
func TestValidate(t *testing.T) {
	cases := map[string]struct {
		old, new string
		field    string
		err      error
	}{
		"UnknownPolicy":   {"schedulingPolicy: p", "schedulingPolicy: x", "jobQueues[0].schedulingPolicy", clusterconfig.ErrUnknown},
		"UnknownEnv":      {"serviceEnvironments: [se]", "serviceEnvironments: [x]", "jobQueues[0].serviceEnvironments[0]", clusterconfig.ErrUnknown},
		"Strategy":        {"strategy: LEND", "strategy: SHARE", "jobQueues[0].quotaShares[0].resourceSharingConfiguration.strategy", clusterconfig.ErrEnum},
		"NoStrategy":      {"{strategy: LEND}", "{}", "jobQueues[0].quotaShares[0].resourceSharingConfiguration.strategy", clusterconfig.ErrRequired},
		"BorrowOnLend":    {"{strategy: LEND}", "{strategy: LEND, borrowLimit: 5}", "jobQueues[0].quotaShares[0].resourceSharingConfiguration.borrowLimit", clusterconfig.ErrRange},
		"ShareUnit":       {"maxCapacity: 1", "maxCapacity: 1}, {capacityUnit: ml.p4d.24xlarge, maxCapacity: 1", "jobQueues[0].quotaShares[0].capacityLimits[1].capacityUnit", clusterconfig.ErrUnknown},
		"ShareZero":       {"maxCapacity: 1", "maxCapacity: 0", "jobQueues[0].quotaShares[0].capacityLimits[0].maxCapacity", clusterconfig.ErrRange},
		"BadUnit":         {"ml.g5.xlarge, maxCapacity: 3", "g5, maxCapacity: 3", "serviceEnvironments[0].capacityLimits[0].capacityUnit", clusterconfig.ErrEnum},
		"DuplicateShare":  {"    quotaShares:\n", "    quotaShares:\n      - {name: a, capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}], resourceSharingConfiguration: {strategy: RESERVE}}\n", "jobQueues[0].quotaShares[1].name", clusterconfig.ErrDuplicate},
		"SharesOnFIFO":    {"    schedulingPolicy: p\n", "", "jobQueues[0].quotaShares", clusterconfig.ErrRange},
		"InSharePreempts": {"{strategy: LEND}", "{strategy: LEND}\n        preemptionConfiguration: {inSharePreemption: YES}", "jobQueues[0].quotaShares[0].preemptionConfiguration.inSharePreemption", clusterconfig.ErrEnum},
		"MinRuntime":      {"{strategy: LEND}", "{strategy: LEND}\n        sharq: {minimumRuntimeSeconds: -5}", "jobQueues[0].quotaShares[0].sharq.minimumRuntimeSeconds", clusterconfig.ErrRange},
		"MinRuntimeMax":   {"{strategy: LEND}", "{strategy: LEND}\n        sharq: {minimumRuntimeSeconds: 31536001}", "jobQueues[0].quotaShares[0].sharq.minimumRuntimeSeconds", clusterconfig.ErrRange},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(base, c.old, c.new, 1)
			if in == base {
				t.Fatalf("case does not change the base config")
			}
			_, err := clusterconfig.Parse(strings.NewReader(in))
			var fe *clusterconfig.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, c.err) {
				t.Errorf("err = %v, want %v in %s", err, c.err, c.field)
			}
		})
	}
	if _, err := clusterconfig.Parse(strings.NewReader(base)); err != nil {
		t.Errorf("base config: %v", err)
	}
}

// Ensure a misspelt key is an error rather than ignored.
func TestUnknownField(t *testing.T) {
	_, err := clusterconfig.Parse(strings.NewReader(strings.Replace(base, "capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 3}]", "capacityLimit: []", 1)))
	if err == nil || !strings.Contains(err.Error(), "capacityLimit") {
		t.Errorf("err = %v, want one naming capacityLimit", err)
	}
}

// Ensure a mistake in the file is reported at its line and column:
// syntax errors where the problem is (not where its block began), values
// of the wrong type, unknown keys and invalid fields.
func TestErrorPositions(t *testing.T) {
	cases := map[string]struct{ old, new, want string }{
		"Indent": {"jobQueues:\n", "  bad: [\njobQueues:\n",
			"line 4, column 3: did not find expected key"},
		"Tab": {"    schedulingPolicy: p\n", "    schedulingPolicy: p\n\tx: 1\n",
			"line 7, column 1: found a tab character that violates indentation"},
		"Type": {"maxCapacity: 1}", "maxCapacity: one}",
			"line 10, column 68: cannot unmarshal !!str `one` into int"},
		"UnknownKey": {"    schedulingPolicy: p\n", "    schedulingPolicy: p\n    priorty: 3\n",
			"line 7, column 5: field priorty not found"},
		"Field": {"{strategy: LEND}", "{strategy: LEND_AND_BORROW, borrowLimit: -2}",
			"line 11, column 80: jobQueues[0].quotaShares[0].resourceSharingConfiguration.borrowLimit is out of range: must be at least -1, not -2"},
		"Missing": {"{strategy: LEND}", "{}",
			"line 11, column 39: jobQueues[0].quotaShares[0].resourceSharingConfiguration.strategy is required"},
		// AWS takes an Integer, 32 bits; the message is the API's.
		"BorrowLimitMax": {"{strategy: LEND}", "{strategy: LEND_AND_BORROW, borrowLimit: 3000000000}",
			"line 11, column 80: jobQueues[0].quotaShares[0].resourceSharingConfiguration.borrowLimit is out of range: must be at most 2147483647, not 3000000000"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(base, c.old, c.new, 1)
			if in == base {
				t.Fatalf("case does not change the base config")
			}
			_, err := clusterconfig.Parse(strings.NewReader(in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

// Ensure a share's minimum runtime (sharq's own setting) parses, survives
// Marshal, and reaches the engine.
func TestMinimumRuntime(t *testing.T) {
	in := strings.Replace(base, "{strategy: LEND}", "{strategy: LEND}\n        sharq: {minimumRuntimeSeconds: 300}", 1)
	c, err := clusterconfig.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.JobQueues[0].QuotaShares[0].MinimumRuntime(); got != 300*time.Second {
		t.Fatalf("minimum runtime %v", got)
	}
	if got := remarshalled(t, c).JobQueues[0].QuotaShares[0].MinimumRuntime(); got != 300*time.Second {
		t.Fatalf("round trip: minimum runtime %v", got)
	}
	e := applied(t, c)
	shares := e.Shares()
	if len(shares) != 1 || shares[0].MinimumRuntime != 300*time.Second {
		t.Errorf("shares: %+v", shares)
	}
}
