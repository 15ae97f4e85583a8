package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// Ensure apply shows its plan before acting, --dry-run changes nothing, a
// second apply finds nothing to do, and a changed file updates only what
// changed.
func TestApply(t *testing.T) {
	s := newServer(t, false)
	golden(t, "apply_dry_run", s.ok(Apply, "-f", announcement, "--dry-run"))
	if qs, _, _ := s.eng.DescribeJobQueues(t.Context(), nil, batchmodel.Page{}); len(qs) != 0 {
		t.Fatalf("--dry-run created %d queues", len(qs))
	}
	golden(t, "apply", s.ok(Apply, "-f", announcement))
	golden(t, "apply_again", s.ok(Apply, "-f", announcement))
	var res applyResult
	if err := json.Unmarshal([]byte(s.ok(Apply, "-f", announcement, "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || res.Applied {
		t.Errorf("second apply -o json: %+v", res)
	}

	dir := t.TempDir()
	changed := filepath.Join(dir, "cluster.yaml")
	writeChanged(t, changed)
	hideDir := func(s string) string { return strings.ReplaceAll(s, dir, "DIR") }
	golden(t, "apply_update_dry_run", hideDir(s.ok(Apply, "-f", changed, "--dry-run")))
	if err := json.Unmarshal([]byte(s.ok(Apply, "-f", changed, "--dry-run", "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 8 || res.Applied {
		t.Errorf("update dry run -o json: %d changes, applied %v", len(res.Changes), res.Applied)
	}
	golden(t, "apply_update", hideDir(s.ok(Apply, "-f", changed)))
	golden(t, "apply_update_again", hideDir(s.ok(Apply, "-f", changed)))

	qs3 := s.share("my-sm-training-qm-jq", "QS3")
	if qs3.State != "DISABLED" {
		t.Errorf("QS3 is %s after apply", qs3.State)
	}
	if qs1 := s.share("my-sm-training-qm-jq", "QS1"); qs1.Tags["team"] != "vision" {
		t.Errorf("QS1 tags %v", qs1.Tags)
	}
	for share, want := range map[string]int{"QS1": 0, "QS2": 300, "QS4": 60} {
		if got := s.share("my-sm-training-qm-jq", share).MinimumRuntimeSeconds; got != want {
			t.Errorf("%s's minimum runtime after apply: %ds, want %ds", share, got, want)
		}
	}
	golden(t, "shares_minimum_runtime", s.ok(Shares))
}

// writeChanged writes the announcement's set-up with a larger environment,
// another queue priority, QS1 tagged, QS2 borrowing with a minimum runtime,
// QS3 disabled and a new share QS4 with one.
func writeChanged(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(announcement)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{
		{"maxCapacity: 3}", "maxCapacity: 4}"},
		{"priority: 1", "priority: 2"},
		{"- name: QS1\n", "- name: QS1\n        tags: {team: vision}\n"},
		{"{strategy: LEND}", "{strategy: LEND_AND_BORROW, borrowLimit: 100}\n        sharq: {minimumRuntimeSeconds: 300}"},
		{"- name: QS3\n", "- name: QS3\n        state: DISABLED\n"},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("examples/announcement.yaml no longer has %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	s += `      - name: QS4
        capacityLimits:
          - {capacityUnit: ml.g5.xlarge, maxCapacity: 1}
        resourceSharingConfiguration: {strategy: RESERVE}
        sharq: {minimumRuntimeSeconds: 60}
`
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// share reads a quota share from the engine.
func (s *server) share(queue, name string) record.QuotaShare {
	s.t.Helper()
	shares, _, err := s.eng.ListQuotaShares(s.t.Context(), queue, batchmodel.Page{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, sh := range shares {
		if sh.QuotaShareName == name {
			d, err := s.eng.DescribeQuotaShare(s.t.Context(), sh.QuotaShareArn)
			if err != nil {
				s.t.Fatal(err)
			}
			return d
		}
	}
	s.t.Fatalf("no quota share %s/%s", queue, name)
	return record.QuotaShare{}
}

// Ensure a bad file or command line is a usage error that says what is
// wrong, and nothing reaches the server.
func TestApplyErrors(t *testing.T) {
	s := newServer(t, false)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("jobQueues:\n  - name: q\n    priorty: 1\n"), 0o644)
	expect(t, s.run(Apply, "-f", bad), ExitUsage, "priorty")
	expect(t, s.run(Apply), ExitUsage, "-f FILE is required")
	expect(t, s.run(Apply, "-f", filepath.Join(t.TempDir(), "missing.yaml")), ExitUsage, "no such file")
	if qs, _, _ := s.eng.DescribeJobQueues(t.Context(), nil, batchmodel.Page{}); len(qs) != 0 {
		t.Errorf("a bad apply created %d queues", len(qs))
	}
}

// TestApplyOversizedLimit: a share's limit above its environment's capacity
// is applied, as AWS applies it, with a warning in the plan and under the
// shares table.
func TestApplyOversizedLimit(t *testing.T) {
	s := newServer(t, false)
	b, err := os.ReadFile(announcement)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), "{capacityUnit: ml.g5.xlarge, maxCapacity: 1}", "{capacityUnit: ml.g5.xlarge, maxCapacity: 5}", 1)
	file := filepath.Join(t.TempDir(), "oversized.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	golden(t, "apply_oversized_dry_run", s.ok(Apply, "-f", file, "--dry-run"))
	s.ok(Apply, "-f", file)
	golden(t, "shares_oversized", s.ok(Shares))
}
