package postgres_test

import (
	"context"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
	"github.com/sharq-dev/sharq/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return mustOpen(t, pgtest.URL(t)) })
}

// mustOpen opens a store on url; the caller closes it.
func mustOpen(tb testing.TB, url string, opts ...postgres.Option) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), url, opts...)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	return s
}

func TestKeyStore(t *testing.T) {
	accesstest.TestKeyStore(t, func(t *testing.T) access.KeyStore {
		s := mustOpen(t, pgtest.URL(t))
		t.Cleanup(func() { s.Close() })
		return s.Keys()
	})
}

func TestAuditStore(t *testing.T) {
	accesstest.TestAuditStore(t, func(t *testing.T) access.AuditStore {
		s := mustOpen(t, pgtest.URL(t))
		t.Cleanup(func() { s.Close() })
		return s.Keys()
	})
}

func TestUsageConformance(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) store.Store { return mustOpen(t, pgtest.URL(t)) })
}
