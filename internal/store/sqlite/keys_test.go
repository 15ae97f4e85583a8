package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

func TestKeyStore(t *testing.T) {
	accesstest.TestKeyStore(t, func(t *testing.T) access.KeyStore {
		s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
		t.Cleanup(func() { s.Close() })
		return s.Keys()
	})
}

func TestAuditStore(t *testing.T) {
	accesstest.TestAuditStore(t, func(t *testing.T) access.AuditStore {
		s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
		t.Cleanup(func() { s.Close() })
		return s.Keys()
	})
}

// A batch longer than one INSERT's rows is written whole and in order,
// whatever its length's remainder.
func TestAppendAuditInChunks(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
	t.Cleanup(func() { s.Close() })
	k := s.Keys()
	var want []string
	for _, n := range []int{auditRows, 2*auditRows + 5, 3} {
		var batch []access.AuditEntry
		for i := range n {
			op := fmt.Sprintf("batch:Op%d-%d", n, i)
			batch = append(batch, access.AuditEntry{Time: time.UnixMilli(int64(len(want) + 1)), Operation: op})
			want = append(want, op)
		}
		if err := k.AppendAudit(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
	got, err := k.Audit(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Operation != want[i] || e.Seq != int64(i+1) {
			t.Errorf("entry %d: %s seq %d, want %s seq %d", i, e.Operation, e.Seq, want[i], i+1)
		}
	}
}
