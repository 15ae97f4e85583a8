package sqlite

import (
	"path/filepath"
	"testing"

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
