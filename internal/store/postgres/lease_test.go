package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/postgres/pgtest"
)

func campaign(t *testing.T, s *postgres.Store, holder string, ttl time.Duration) *postgres.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l, err := s.Campaign(ctx, holder, holder+":8080", ttl)
	if err != nil {
		t.Fatalf("%s campaign: %v", holder, err)
	}
	return l
}

func job(id string) *store.Batch {
	return &store.Batch{Jobs: []store.Job{{ID: id, Name: id, Status: "RUNNABLE", CreatedAt: 1}}}
}

// Ensure one server leads at a time, a resignation hands over at once
// with a higher term, and the old leader can write nothing after.
func TestLeaseHandover(t *testing.T) {
	url := pgtest.URL(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	defer a.Close()
	defer b.Close()
	if li, err := a.Leader(t.Context()); err != nil || li.Holder != "" || li.Expires.After(time.Now()) {
		t.Errorf("Leader() of a lease never taken = %+v, %v", li, err)
	}
	la := campaign(t, a, "a", 10*time.Second)
	if !la.Held() {
		t.Error("a new lease is not Held")
	}
	if err := a.Commit(t.Context(), job("by-a")); err != nil {
		t.Fatalf("leader's commit: %v", err)
	}
	got := make(chan *postgres.Lease, 1)
	go func() {
		l, _ := b.Campaign(t.Context(), "b", "b:8080", 10*time.Second)
		got <- l
	}()
	select {
	case <-got:
		t.Fatal("b took the lease while a held it")
	case <-time.After(500 * time.Millisecond):
	}
	began := time.Now()
	if err := la.Resign(t.Context()); err != nil {
		t.Fatal(err)
	}
	lb := <-got
	if li, err := b.Leader(t.Context()); err != nil || li.Holder != "b" {
		t.Errorf("Leader() after a handover = %+v, %v", li, err)
	}
	if la.Held() {
		t.Error("a resigned lease is still Held")
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("b took over %s after a resigned, want at its next try (2.5s)", took)
	}
	if lb.Term() != la.Term()+1 {
		t.Errorf("terms %d then %d", la.Term(), lb.Term())
	}
	if err := a.Commit(t.Context(), job("late")); !errors.Is(err, store.ErrFenced) {
		t.Errorf("commit after resigning: %v, want ErrFenced", err)
	}
	if err := b.Commit(t.Context(), job("by-b")); err != nil {
		t.Errorf("new leader's commit: %v", err)
	}
	if li, err := b.Leader(t.Context()); err != nil || li.Holder != "b" || li.Term != lb.Term() || li.Address != "b:8080" {
		t.Errorf("Leader() = %+v, %v", li, err)
	}
}

// Ensure a leader that lost its lease without noticing (paused past its
// expiry, say) cannot commit once another has taken over: the database
// refuses its write, and its lease ends.
func TestFencedAfterTakeover(t *testing.T) {
	url := pgtest.URL(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	defer a.Close()
	defer b.Close()
	la := campaign(t, a, "a", time.Hour) // it would not notice for a long while
	// As if a's lease had run out while it was paused.
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `UPDATE leader SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	lb := campaign(t, b, "b", time.Hour)
	if err := a.Commit(t.Context(), job("stale")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale leader's commit: %v, want ErrFenced", err)
	}
	select {
	case <-la.Done():
	default:
		t.Error("the stale leader's lease is not Done after a fenced commit")
	}
	if _, err := b.Job(t.Context(), "stale"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the stale leader's job was written: %v", err)
	}
	if err := b.Commit(t.Context(), job("fresh")); err != nil {
		t.Errorf("leader of term %d: %v", lb.Term(), err)
	}
}

// Ensure a leader whose renewals stop succeeding gives the lease up by
// itself, before the database lets another server take it.
func TestLeaseLostWhenNotRenewed(t *testing.T) {
	url := pgtest.URL(t)
	a := mustOpen(t, url)
	defer a.Close()
	la := campaign(t, a, "a", 800*time.Millisecond)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Another holder's name in the row: a's renewals now update nothing.
	if _, err := conn.Exec(t.Context(), `UPDATE leader SET holder = 'someone else'`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-la.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease is still held after its renewals failed")
	}
	if la.Held() {
		t.Error("a lost lease is still Held")
	}
	if err := a.Commit(t.Context(), job("x")); !errors.Is(err, store.ErrFenced) {
		t.Errorf("commit after the lease ended: %v, want ErrFenced", err)
	}
}
