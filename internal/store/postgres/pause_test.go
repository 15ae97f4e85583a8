package postgres

import (
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
)

// Ensure a leader paused inside a commit, holding the lease row's lock,
// does not keep the others from taking over: the database ends the idle
// transaction of a store's connection, and its lock with it.
func TestTakeoverPastAPausedCommit(t *testing.T) {
	url := pgtest.URL(t)
	a, err := Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Campaign(t.Context(), "a", "a:1", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	// What a's commit does first, then nothing: as if a stopped there.
	tx, err := a.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(t.Context())
	if _, err := tx.Exec(t.Context(), fenceSQL); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	lb, err := b.Campaign(t.Context(), "b", "b:1", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 15*time.Second || lb.Term() != 2 {
		t.Errorf("b took over after %s, term %d", took, lb.Term())
	}
}
