package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/NAME.golden, or rewrites it with
// -update; review the diff before committing it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from %s (-want +got; run with -update to accept):\n%s", name, path, diff)
	}
}

// runTrace runs a trace file on a config file, with the timeline.
func runTrace(t *testing.T, config, trace string) *sim.Report {
	t.Helper()
	w, err := sim.ReadTraceFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return mustRun(t, w, mustConfig(t, config), sim.Options{Timeline: true})
}

// Ensure the text report reads as recorded: instance types with GPUs in
// GPU-hours, the others in instance-hours, each labelled (mixed_requeue
// has one of each); waits per job and per wait; the timeline.
func TestTextReportGolden(t *testing.T) {
	for name, files := range map[string][2]string{
		"mixed_requeue": {"testdata/mixed.yaml", "testdata/requeue.csv"},
		"walkthrough":   {"../../examples/announcement.yaml", "../../examples/walkthrough.csv"},
		"solo_fail":     {"testdata/solo.yaml", "testdata/fail.csv"},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := runTrace(t, files[0], files[1]).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, name, b.String())
		})
	}
}

// Ensure a job's wait after a preemption counts: big borrows QS2's
// instance, QS2 reclaims it at 1m for ten minutes, and big waits those ten
// minutes for its second dispatch. Its share's time to dispatch is the
// ten minutes, not the zero of its first wait.
func TestWaitAfterPreemption(t *testing.T) {
	trace := `at,event,job,share,priority,instance_type,instance_count,runtime
0,submit,big,QS1,1,ml.g5.xlarge,2,3600
60,submit,reclaim,QS2,1,ml.g5.xlarge,1,600
`
	w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader(trace)), "")
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, w, mustConfig(t, "../../examples/announcement.yaml"), sim.Options{Timeline: true})
	var line []string
	for _, e := range r.Timeline {
		line = append(line, strings.Join(strings.Fields(e.String()), " "))
	}
	wantLine := []string{
		"0s dispatched big QS1: borrowed",
		"1.0m preempted big QS1: Preempted: cross-share preemption (capacity reclaimed by quota share QS2 for job reclaim)",
		"1.0m dispatched reclaim QS2: own, reclaim",
		"11.0m succeeded reclaim QS2: Training job completed",
		"11.0m dispatched big QS1: borrowed",
		"1.2h succeeded big QS1: Training job completed",
	}
	if diff := cmp.Diff(wantLine, line); diff != "" {
		t.Fatalf("the scenario did not run as designed (-want +got):\n%s", diff)
	}
	ten := sim.WaitStats{Count: 1, Mean: 600, P50: 600, P95: 600, P99: 600, Max: 600}
	want := sim.WaitReport{
		All: sim.WaitStats{Count: 2, Mean: 300, P50: 0, P95: 600, P99: 600, Max: 600},
		ByShare: []sim.WaitGroup{
			{Group: "my-sm-training-qm-jq/QS1", WaitStats: ten},
			{Group: "my-sm-training-qm-jq/QS2", WaitStats: sim.WaitStats{Count: 1}},
		},
		ByPriority: []sim.WaitGroup{{Group: "1", WaitStats: sim.WaitStats{Count: 2, Mean: 300, P50: 0, P95: 600, P99: 600, Max: 600}}},
		First:      sim.WaitStats{Count: 2},
		Requeued:   ten,
	}
	if diff := cmp.Diff(want, r.Waits, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("time to dispatch (-want +got):\n%s", diff)
	}
}

// Ensure use is in GPU-hours only where the instance type has GPUs: in
// JSON, the pool of ml.g5.12xlarge (4 GPUs) has GPU-hours four times its
// instance-hours, the pool of ml.m5.large none; a report of CPU instances
// only never says GPU.
func TestHoursByInstanceType(t *testing.T) {
	r := runTrace(t, "testdata/mixed.yaml", "testdata/requeue.csv")
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pools []map[string]any `json:"pools"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][3]any{}
	for _, p := range doc.Pools {
		got[p["capacityUnit"].(string)] = [3]any{p["gpusPerInstance"], p["instanceHours"], p["gpuHours"]}
	}
	want := map[string][3]any{
		"ml.g5.12xlarge": {4.0, 2.2, 8.8},
		"ml.m5.large":    {0.0, 1.15, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pools: gpusPerInstance, instanceHours, gpuHours (-want +got):\n%s", diff)
	}

	cpu := mustRun(t, sim.KueueBaseline(1, 2), nil, sim.Options{})
	b.Reset()
	if err := cpu.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if text := b.String(); strings.Contains(text, "GPU") || !strings.Contains(text, "instance-hours") {
		t.Errorf("a report of ml.m5.large only speaks of GPUs, or not of instance-hours:\n%s", text)
	}
}

// TestNeverRanNamed: the report names the jobs that never ran, up to ten,
// with why they wait, and counts the rest.
func TestNeverRanNamed(t *testing.T) {
	trace := "at,event,job,share,priority,instance_type,instance_count,runtime\n0,submit,ok,QS1,1,ml.g5.xlarge,1,60\n"
	for i := range 12 {
		trace += fmt.Sprintf("0,submit,huge%02d,QS2,1,ml.g5.xlarge,9,60\n", i)
	}
	w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader(trace)), "")
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, w, mustConfig(t, "../../examples/announcement.yaml"), sim.Options{})
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"12 never ran\n",
		"  never ran: huge00: MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - the job needs 9 ml.g5.xlarge; service environment my-sm-training-qm-se has at most 3\n",
		"  never ran: huge09: ",
		"  and 2 more that never ran\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "huge10") || len(r.NeverRanJobs) != sim.MaxNeverRanShown {
		t.Errorf("the report names %d jobs that never ran, want %d:\n%s", len(r.NeverRanJobs), sim.MaxNeverRanShown, text)
	}
}
