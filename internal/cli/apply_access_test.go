package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const teamAPolicy = `
accessPolicies:
  - name: team-a
    statements:
      - effect: Allow
        actions: [batch:SubmitServiceJob, batch:UpdateServiceJob, batch:TerminateServiceJob]
        resources: ["arn:aws:batch:*:*:job-queue/my-sm-training-qm-jq/quota-share/QS1", "arn:aws:batch:*:*:service-job/*"]
      - effect: Allow
        actions: ["batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"]
        resources: ["*"]
`

// Ensure apply puts the file's access policies, and only when they differ
// from the server's.
func TestApplyAccessPolicies(t *testing.T) {
	s := newServer(t, false)
	b, err := os.ReadFile(announcement)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	os.WriteFile(file, append(b, teamAPolicy...), 0o644)
	if out := s.ok(Apply, "-f", file); !strings.Contains(out, "+ create access policy team-a: 2 statements") {
		t.Errorf("first apply:\n%s", out)
	}
	if out := s.ok(Apply, "-f", file); !strings.Contains(out, "no changes") {
		t.Errorf("second apply:\n%s", out)
	}
	os.WriteFile(file, append(b, strings.Replace(teamAPolicy, "QS1", "QS2", 1)...), 0o644)
	if out := s.ok(Apply, "-f", file); !strings.Contains(out, "~ update access policy team-a") {
		t.Errorf("apply of a changed policy:\n%s", out)
	}
	p, err := s.keys.Policy(t.Context(), "team-a")
	if err != nil || !strings.Contains(string(p.Document), "quota-share/QS2") || !json.Valid(p.Document) {
		t.Errorf("stored policy %s, %v", p.Document, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, append(b, strings.Replace(teamAPolicy, "effect: Allow", "effect: Perhaps", 1)...), 0o644)
	expect(t, s.run(Apply, "-f", bad), ExitUsage, "accessPolicies[0].statements")
	os.WriteFile(bad, append(b, strings.Replace(teamAPolicy, "team-a", "AdministratorAccess", 1)...), 0o644)
	expect(t, s.run(Apply, "-f", bad), ExitUsage, "built-in")
}
