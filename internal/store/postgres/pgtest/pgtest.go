// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema of the server that $SHARQ_TEST_POSTGRES names, dropped when the
// test ends. Without that variable a test is skipped, unless
// $SHARQ_REQUIRE_POSTGRES is set (as CI sets it), when it fails: no test
// may pass in CI by skipping for lack of the server.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerURL returns $SHARQ_TEST_POSTGRES, or ends the test (skipped, or
// failed when PostgreSQL is required).
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SHARQ_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("SHARQ_REQUIRE_POSTGRES") != "" {
			t.Fatal("SHARQ_TEST_POSTGRES is not set, and PostgreSQL is required ($SHARQ_REQUIRE_POSTGRES): .ci/run starts a server and sets it")
		}
		t.Skip("no PostgreSQL: set SHARQ_TEST_POSTGRES=postgres://user@host:port/db (.ci/run starts one)")
	}
	return u
}

var (
	schemas sync.Map // *testing.T → URL of its schema
	seq     atomic.Int64
)

// URL returns the URL of a schema that is the same for every call with
// the same t, empty at the first, and dropped when t ends: an Opener can
// reopen the same data.
func URL(t testing.TB) string {
	t.Helper()
	if u, ok := schemas.Load(t); ok {
		return u.(string)
	}
	server := ServerURL(t)
	name := fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
	exec(t, server, `CREATE SCHEMA `+name)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("SHARQ_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	schemas.Store(t, u.String())
	t.Cleanup(func() {
		schemas.Delete(t)
		exec(t, server, `DROP SCHEMA `+name+` CASCADE`)
	})
	return u.String()
}

func exec(t testing.TB, server, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to %s: %v", redact(server), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// redact hides a password in a URL for messages.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "the server of SHARQ_TEST_POSTGRES"
}
