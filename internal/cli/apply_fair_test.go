package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure apply creates a fair-share policy as the file has it, finds
// nothing to do the second time, and updates the policy when a weight
// changes.
func TestApplyFairShare(t *testing.T) {
	s := newServer(t, false)
	const file = "../../examples/fair-share.yaml"
	out := s.ok(Apply, "-f", file)
	if !strings.Contains(out, "fair share, decay 3600s, reservation 25%, weights [research:0.125 team-*:1]") {
		t.Errorf("first apply:\n%s", out)
	}
	if out := s.ok(Apply, "-f", file); !strings.Contains(out, "no changes") {
		t.Errorf("second apply:\n%s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "fair.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(string(b), "weightFactor: 0.125", "weightFactor: 0.25", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := s.ok(Apply, "-f", changed); !strings.Contains(out, "weights [research:0.125 team-*:1] -> fair share, decay 3600s, reservation 25%, weights [research:0.25 team-*:1]") {
		t.Errorf("apply of a changed weight:\n%s", out)
	}
	if out := s.ok(Apply, "-f", changed); !strings.Contains(out, "no changes") {
		t.Errorf("apply again:\n%s", out)
	}
}
