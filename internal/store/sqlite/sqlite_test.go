package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return mustOpen(t, filepath.Join(storetest.Dir(t), "sharq.db"))
	})
}

// mustOpen opens a store at path; the caller closes it.
func mustOpen(tb testing.TB, path string, opts ...Option) *Store {
	tb.Helper()
	s, err := Open(path, opts...)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	return s
}

func TestUsageConformance(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) store.Store {
		return mustOpen(t, filepath.Join(storetest.Dir(t), "sharq.db"))
	})
}
