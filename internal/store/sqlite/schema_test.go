package sqlite

import (
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/store"
)

// Ensure the writer runs with the settings durability depends on.
func TestPragmas(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
	defer s.Close()
	want := map[string]string{
		"journal_mode": "wal",
		"synchronous":  "2", // FULL
		"foreign_keys": "1",
		"busy_timeout": "5000",
		"cache_size":   fmt.Sprint(-writerCacheKiB),
	}
	for name, w := range want {
		var got string
		if err := s.writer.QueryRow("PRAGMA " + name).Scan(&got); err != nil {
			t.Fatalf("pragma %s: %v", name, err)
		}
		if got != w {
			t.Errorf("pragma %s = %q, want %q", name, got, w)
		}
	}
	var autockpt string
	if err := s.writer.QueryRow("PRAGMA wal_autocheckpoint").Scan(&autockpt); err != nil || autockpt != fmt.Sprint(walBackstopPages) {
		t.Errorf("writer: wal_autocheckpoint = %q, err %v; want %d", autockpt, err, walBackstopPages)
	}
	var qo, mmap string
	if err := s.readers.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("readers: query_only = %q, err %v; want 1", qo, err)
	}
	if err := s.readers.QueryRow("PRAGMA mmap_size").Scan(&mmap); err != nil || mmap == "0" {
		t.Errorf("readers: mmap_size = %q, err %v; want it on", mmap, err)
	}
}

// Ensure Open creates missing parent directories, and reopening applies
// no migration twice.
func TestOpenMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "sharq.db")
	for range 2 {
		s := mustOpen(t, path)
		var n int
		if err := s.writer.QueryRow(`SELECT COUNT(*) FROM migrations`).Scan(&n); err != nil {
			t.Fatalf("count migrations: %v", err)
		}
		files, _ := migrationFS.ReadDir("migration")
		if n != len(files) || n == 0 {
			t.Errorf("migrations recorded = %d, want %d", n, len(files))
		}
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
}

// Ensure the listings the API serves most read one index in order and stop
// after a page, rather than sorting every match.
func TestQueryPlans(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
	defer s.Close()
	cursor := store.EncodeCursor(5, "x")
	cases := map[string]struct {
		f     store.JobFilter
		index string
	}{
		"All":              {store.JobFilter{}, "jobs_by_created"},
		"AllNextPage":      {store.JobFilter{After: cursor}, "jobs_by_created"},
		"Created":          {store.JobFilter{CreatedAfter: 5, CreatedBefore: 10}, "jobs_by_created"},
		"Queue":            {store.JobFilter{Queue: "q", After: cursor}, "jobs_by_queue"},
		"QueueStatus":      {store.JobFilter{Queue: "q", Statuses: []string{"RUNNING"}, After: cursor}, "jobs_by_queue_status"},
		"Share":            {store.JobFilter{Share: "s", After: cursor}, "jobs_by_share"},
		"Name":             {store.JobFilter{NamePrefix: "x", NameExact: true, After: cursor}, "jobs_by_name"},
		"QueueAndStatuses": {store.JobFilter{Queue: "q", Statuses: []string{"RUNNING", "RUNNABLE"}}, "jobs_by_queue"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			plan := queryPlan(t, s, c.f)
			if !slices.Contains(strings.Fields(plan), c.index) || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan for %+v:\n%s\nwant index %s and no sort", c.f, plan, c.index)
			}
		})
	}
}

func queryPlan(t *testing.T, s *Store, f store.JobFilter) string {
	t.Helper()
	q, args, err := listQuery(f, 101)
	if err != nil {
		t.Fatalf("list query: %v", err)
	}
	rows, err := s.readers.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("explain: %v", err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// Ensure a row of unexpected types is an error, not a panic or a zero job.
func TestJobFromValues(t *testing.T) {
	good := []driver.Value{"id", "name", "q", "", "RUNNABLE", int64(1), int64(0), "", nil}
	j, err := jobFromValues(good)
	if err != nil || j.ID != "id" || j.CreatedAt != 1 {
		t.Fatalf("jobFromValues(%v) = %+v, %v", good, j, err)
	}
	bad := slices.Clone(good)
	bad[5] = "1"
	if _, err := jobFromValues(bad); err == nil {
		t.Errorf("jobFromValues(%v) succeeded", bad)
	}
}
