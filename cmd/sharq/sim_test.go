package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure sharq sim runs a trace on a config, writes the HTML report and
// compares two configs, and refuses contradictory flags.
func TestSimCommand(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "r.html")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sim", "--config", "../../examples/announcement.yaml", "--trace", "../../examples/walkthrough.csv", "--timeline", "--html", html},
			0, "preempted  qs1_job_med QS1: Preempted: cross-share preemption"},
		{[]string{"sim", "--config", "../../examples/announcement.yaml", "--compare", "../../examples/announcement-qs2-reserve.yaml", "--trace", "../../examples/borrow.csv", "-o", "json"},
			0, `"reportB"`},
		{[]string{"sim", "--workload", "random:jobs=50", "--seed", "9", "--write-trace", filepath.Join(dir, "t.csv"), "--no-run"}, 0, ""},
		{[]string{"sim", "--workload", "kueue-baseline", "--min-runtime", "60s", "--write-config", filepath.Join(dir, "c.yaml"), "--no-run"}, 0, ""},
		{[]string{"sim", "--trace", "x.csv", "--workload", "kueue-baseline"}, 2, ""},
		{[]string{"sim", "--workload", "nope"}, 1, ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errOut); code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: exit %d, want %d; output lacks %q?\n%s%s", c.args, code, c.code, c.want, out.String(), errOut.String())
		}
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("HTML report: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.csv")); err != nil {
		t.Errorf("--write-trace: %v", err)
	}
	// --min-runtime gives every quota share of the cluster that minimum.
	if b, err := os.ReadFile(filepath.Join(dir, "c.yaml")); err != nil || bytes.Count(b, []byte("minimumRuntimeSeconds: 60")) != 30 {
		t.Errorf("--min-runtime: %v\n%s", err, b)
	}
}
