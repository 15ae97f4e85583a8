package sim_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/sim"
)

// Ensure the Kueue workloads run on the cluster they bring and report the
// time to dispatch of each class; kueue-large needs more than 20 shares
// per queue. Both are bounded here; the benchmarks run them whole.
func TestKueueWorkloads(t *testing.T) {
	for name, w := range map[string]*sim.Workload{
		"baseline": sim.KueueBaseline(1, 3),
		"large":    sim.KueueLarge(1, 25),
	} {
		t.Run(name, func(t *testing.T) {
			r := mustRun(t, w, nil, sim.Options{})
			if r.Jobs.Succeeded != len(w.Jobs) {
				t.Errorf("%d of %d jobs succeeded", r.Jobs.Succeeded, len(w.Jobs))
			}
			var classes []string
			for _, g := range r.Waits.ByClass {
				classes = append(classes, g.Group)
				if g.Count == 0 {
					t.Errorf("class %s: no waits", g.Group)
				}
			}
			if diff := cmp.Diff([]string{"large", "medium", "small"}, classes); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
			if r.Utilisation <= 0 || r.Utilisation > 1 {
				t.Errorf("utilisation %v", r.Utilisation)
			}
		})
	}
}

// render returns every form of a report.
func render(t *testing.T, r *sim.Report) string {
	t.Helper()
	var b bytes.Buffer
	for _, write := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return r.WriteText(b) },
		func(b *bytes.Buffer) error { return r.WriteJSON(b) },
		func(b *bytes.Buffer) error { return r.WriteHTML(b) },
	} {
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// Ensure equal config, workload and seed give byte-identical reports, and
// another seed another one.
func TestDeterministic(t *testing.T) {
	const seed = 42
	run := func(seed uint64) string {
		w, err := sim.Builtin("random:jobs=600,load=1.3,changes=0.1,cancels=0.05,shares=5,runtime=600", seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		return render(t, mustRun(t, w, nil, sim.Options{CheckpointInterval: 300e9, Timeline: true}))
	}
	a, b := run(seed), run(seed)
	if a != b {
		t.Fatalf("seed=%d: two runs differ:\n%s", seed, cmp.Diff(a, b))
	}
	if c := run(seed + 1); c == a {
		t.Errorf("seed=%d and seed=%d gave the same report", seed, seed+1)
	}
}

// Ensure a RESERVE QS2 in place of LEND makes QS1's jobs wait: a RESERVE
// share never lends, so nothing is left to borrow.
func TestCompareLendReserve(t *testing.T) {
	w, err := sim.ReadTraceFile("../../examples/borrow.csv")
	if err != nil {
		t.Fatal(err)
	}
	lend := mustRun(t, w, mustConfig(t, "../../examples/announcement.yaml"), sim.Options{})
	w, _ = sim.ReadTraceFile("../../examples/borrow.csv")
	reserve := mustRun(t, w, mustConfig(t, "../../examples/announcement-qs2-reserve.yaml"), sim.Options{})
	c := &sim.Comparison{NameA: "announcement.yaml", NameB: "announcement-qs2-reserve.yaml", A: lend, B: reserve}
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"my-sm-training-qm-jq/QS1 wait max 5.0m 10.0m *",
		"my-sm-training-qm-jq/QS2 strategy LEND RESERVE *",
		"my-sm-training-qm-jq/QS2 avg lent 0.33 0 *",
		"my-sm-training-qm-jq/QS1 avg borrowed 0.33 0 *",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
}

// Ensure a workload written as CSV or JSON lines reads back the same.
func TestTraceRoundTrip(t *testing.T) {
	w, err := sim.Builtin("random:jobs=300,changes=0.2,cancels=0.2", 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Config, w.Name = nil, ""
	for format, write := range map[string]func(*bytes.Buffer) error{
		"csv":   func(b *bytes.Buffer) error { return sim.WriteCSV(b, w) },
		"jsonl": func(b *bytes.Buffer) error { return sim.WriteJSONL(b, w) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		back, err := sim.ReadTrace(bufio.NewReader(&b), "")
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if diff := cmp.Diff(w, back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", format, diff)
		}
	}
}

// Ensure trace mistakes are reported with their line.
func TestTraceErrors(t *testing.T) {
	for in, want := range map[string]string{
		"at,job,share\n0,a,QS1\n":                     "job a: no instance type",
		"at,job,colour\n0,a,red\n":                    `line 2: unknown field "colour"`,
		"at,event,job\n0,priority,a\n":                "line 2: priority event needs a priority",
		"at,job,instance_type\nsoon,a,ml.g5.xlarge\n": `line 2: at "soon" is neither seconds nor a duration`,
		`{"at":1,"job":"a","event":"cancel"}` + "\n":  "line 1: job a is changed before it is submitted",
		"at,job,instance_type\n0,a,x\n0,a,x\n":        "line 3: job a is submitted twice",
		`{"at":1,"job":"a","colour":"red"}` + "\n":    `line 1: unknown field "colour"`,
		"at,,job\n0,,a\n":                             `line 2: unknown field ""`,
	} {
		_, err := sim.ReadTrace(bufio.NewReader(strings.NewReader(in)), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}
