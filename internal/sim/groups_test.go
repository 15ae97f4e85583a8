package sim_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/sim"
)

// groupsConfig is an environment of two instance types with one share.
const groupsConfig = `
schedulingPolicies: [{name: p, quotaSharePolicy: {}}]
serviceEnvironments:
  - name: se
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 2}, {capacityUnit: ml.p4d.24xlarge, maxCapacity: 1}]
jobQueues:
  - name: q
    schedulingPolicy: p
    serviceEnvironments: [se]
    quotaShares:
      - name: A
        capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 2}, {capacityUnit: ml.p4d.24xlarge, maxCapacity: 1}]
        resourceSharingConfiguration: {strategy: RESERVE}
`

// TestInstanceGroups: a job of instance groups of two types reads from CSV
// and JSON lines, writes back the same, holds both types while it runs
// (the second job, of one p4d, waits for it), and exports as it ran.
func TestInstanceGroups(t *testing.T) {
	csvTrace := "at,event,job,share,priority,runtime,instance_groups,instance_type\n" +
		"0,submit,hetero,A,0,600,ml.g5.xlarge:2+ml.p4d.24xlarge:1,\n" +
		"1,submit,one,A,0,60,,ml.p4d.24xlarge\n"
	w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader(csvTrace)), "csv")
	if err != nil {
		t.Fatal(err)
	}
	groups := []sim.InstanceGroup{{Type: "ml.g5.xlarge", Count: 2}, {Type: "ml.p4d.24xlarge", Count: 1}}
	if j := w.Jobs[0]; !cmp.Equal(j.Groups, groups) || j.InstanceType != "ml.g5.xlarge" || j.Count != 2 {
		t.Fatalf("hetero read as %+v", j)
	}
	for _, format := range []string{"csv", "jsonl"} {
		var b bytes.Buffer
		write := sim.WriteCSV
		if format == "jsonl" {
			write = sim.WriteJSONL
		}
		if err := write(&b, w); err != nil {
			t.Fatal(err)
		}
		back, err := sim.ReadTrace(bufio.NewReader(&b), format)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		if diff := cmp.Diff(w.Jobs, back.Jobs); diff != "" {
			t.Errorf("%s written and read back (-before +after):\n%s", format, diff)
		}
	}
	if _, err := sim.ReadTrace(bufio.NewReader(strings.NewReader("at,job,share,instance_type,instance_groups\n0,x,A,ml.g5.xlarge,ml.g5.xlarge:1\n")), "csv"); err == nil {
		t.Error("a row with both instance_type and instance_groups was read")
	}

	cfg, err := clusterconfig.Parse(strings.NewReader(groupsConfig))
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, w, cfg, sim.Options{Timeline: true})
	var line []string
	for _, e := range r.Timeline {
		line = append(line, strings.Join(strings.Fields(e.String()), " "))
	}
	want := []string{
		"0s dispatched hetero A: own",
		"10.0m succeeded hetero A: Training job completed",
		"10.0m dispatched one A: own",
		"11.0m succeeded one A: Training job completed",
	}
	if diff := cmp.Diff(want, line); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	for _, p := range r.Pools {
		if p.InstanceHours == 0 {
			t.Errorf("pool %s: no instance-hours, though hetero ran on it", p.Unit)
		}
	}

	exported, _ := sim.FromJobs([]batchapi.ServiceJob{{JobID: "hetero", JobName: "hetero", JobQueue: "q", QuotaShareName: "A", Status: "SUCCEEDED",
		CapacityUsage: []batchapi.CapacityUsage{{CapacityUnit: "ml.g5.xlarge", Quantity: 2}, {CapacityUnit: "ml.p4d.24xlarge", Quantity: 1}},
		Attempts:      []batchapi.Attempt{{StartedAt: 1000, StoppedAt: 601000}}}})
	if j := exported.Jobs[0]; !cmp.Equal(j.Groups, groups) || j.InstanceType != "ml.g5.xlarge" || j.Count != 2 {
		t.Errorf("exported as %+v", j)
	}
}
