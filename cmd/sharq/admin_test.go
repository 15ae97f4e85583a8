package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// admin runs sharq admin with args and returns its exit code and output.
func admin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runAdmin(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Ensure the verbs that read keys refuse a directory that holds no
// database, without making one (nor ./sharq-data, by default), and a key
// is refused a policy that is neither built-in nor applied.
func TestAdminKeys(t *testing.T) {
	t.Chdir(t.TempDir())
	missing := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{
		{"keys", "list"},
		{"keys", "list", "--data-dir", missing},
		{"keys", "disable", "--data-dir", missing, "admin"},
		{"keys", "delete", "--data-dir", missing, "admin"},
	} {
		code, _, stderr := admin(t, args...)
		if code != 1 || !strings.Contains(stderr, "no sharq database in ") || !strings.Contains(stderr, "--data-dir") {
			t.Errorf("sharq admin %s: exit %d, %q; want 1 and no database", strings.Join(args, " "), code, stderr)
		}
	}
	if code, _, _ := admin(t, "keys", "rotate"); code != 2 {
		t.Errorf("an unknown verb: exit %d, want 2", code)
	}
	for _, dir := range []string{"sharq-data", missing} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s exists after the refused verbs (%v)", dir, err)
		}
	}

	dir := t.TempDir()
	code, _, stderr := admin(t, "keys", "create", "--data-dir", dir, "--name", "team-a", "--policy", "ReadOnlyAccess", "--policy", "team-a")
	if code != 3 || !strings.Contains(stderr, `no such access policy "team-a"`) || !strings.Contains(stderr, "sharq apply") {
		t.Errorf("a key with a policy that does not exist: exit %d, %q; want 3 naming the policy", code, stderr)
	}
	if code, _, stderr := admin(t, "keys", "create", "--data-dir", dir, "--name", "admin", "--policy", "AdministratorAccess"); code != 0 {
		t.Fatalf("create admin: exit %d, %s", code, stderr)
	}
	code, out, stderr := admin(t, "keys", "list", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "admin") || strings.Contains(out, "team-a") {
		t.Errorf("sharq admin keys list: exit %d\n%s%s\nwant admin's key only", code, out, stderr)
	}
}
