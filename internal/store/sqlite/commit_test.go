package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// heldStore returns a store whose writer blocks before its first group
// until release is called, and a func that waits for that moment.
func heldStore(t *testing.T) (s *Store, waitHeld, release func()) {
	t.Helper()
	s = mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
	t.Cleanup(func() { s.Close() })
	held, hold := make(chan struct{}), make(chan struct{})
	first := true
	s.beforeWrite = func() {
		if first {
			first = false
			close(held)
			<-hold
		}
	}
	var once sync.Once
	return s, func() { <-held }, func() { once.Do(func() { close(hold) }) }
}

// waitQueued waits until n requests wait in s's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() error {
		if got := s.commits.Queued(); got < n {
			return fmt.Errorf("%d requests queued, want %d", got, n)
		}
		return nil
	})
}

func jobBatch(id string) *store.Batch {
	return &store.Batch{Jobs: []store.Job{{ID: id, Name: id, Queue: "q", Status: "SUBMITTED", CreatedAt: 1}}}
}

// commitAll commits the batches concurrently and returns their errors in
// order, once all returned.
func commitAll(s *Store, batches []*store.Batch) []error {
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() { errs[i] = s.Commit(context.Background(), b) })
	}
	wg.Wait()
	return errs
}

// Ensure commits that queue while a transaction is written are written
// together in the next one.
func TestGroupCommit(t *testing.T) {
	s, waitHeld, release := heldStore(t)
	firstErr := make(chan error)
	go func() { firstErr <- s.Commit(t.Context(), jobBatch("first")) }()
	waitHeld()

	var batches []*store.Batch
	for i := range 10 {
		batches = append(batches, jobBatch(fmt.Sprint("queued-", i)))
	}
	done := make(chan []error)
	go func() { done <- commitAll(s, batches) }()
	waitQueued(t, s, len(batches))
	release()

	if err := <-firstErr; err != nil {
		t.Fatalf("first commit: %v", err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Errorf("queued commit %d: %v", i, err)
		}
	}
	if got := s.Stats(); got.Batches != 11 || got.Transactions != 2 {
		t.Errorf("stats = %+v, want 11 batches in 2 transactions", got)
	}
}

// Ensure a bad batch in a group fails alone: the others are written in
// transactions of their own.
func TestGroupCommitBadBatch(t *testing.T) {
	s, waitHeld, release := heldStore(t)
	go s.Commit(t.Context(), jobBatch("first"))
	waitHeld()

	var batches []*store.Batch
	for i := range 10 {
		batches = append(batches, jobBatch(fmt.Sprint("queued-", i)))
	}
	batches[4].Jobs = append(batches[4].Jobs, store.Job{ID: ""})
	done := make(chan []error)
	go func() { done <- commitAll(s, batches) }()
	waitQueued(t, s, len(batches))
	release()

	for i, err := range <-done {
		if (i == 4) != (err != nil) {
			t.Errorf("commit %d: err = %v", i, err)
		}
	}
	for i := range batches {
		_, err := s.Job(t.Context(), fmt.Sprint("queued-", i))
		if (i == 4) != errors.Is(err, store.ErrNotFound) {
			t.Errorf("job queued-%d: err = %v", i, err)
		}
	}
	if got := s.Stats(); got.Batches != 10 || got.Transactions != 10 {
		t.Errorf("stats = %+v, want 10 batches in 10 transactions", got)
	}
}

// Ensure a commit whose context ends while it is queued returns at once
// and is never written.
func TestCommitAbandoned(t *testing.T) {
	s, waitHeld, release := heldStore(t)
	defer release()
	firstErr := make(chan error)
	go func() { firstErr <- s.Commit(t.Context(), jobBatch("first")) }()
	waitHeld()

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error)
	go func() { errc <- s.Commit(ctx, jobBatch("abandoned")) }()
	waitQueued(t, s, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned commit: err = %v, want context.Canceled", err)
	}
	release()
	if err := <-firstErr; err != nil {
		t.Fatalf("first commit: %v", err)
	}
	commitOrFail(t, s, jobBatch("after"))
	if _, err := s.Job(t.Context(), "abandoned"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("abandoned job: err = %v, want ErrNotFound", err)
	}
	if got, want := s.Stats().Batches, int64(2); got != want {
		t.Errorf("batches written = %d, want %d", got, want)
	}
}

// Ensure Close writes the commits already queued before it returns.
func TestCloseDrainsQueue(t *testing.T) {
	s, waitHeld, release := heldStore(t)
	path := s.writerPath(t)
	go s.Commit(t.Context(), jobBatch("first"))
	waitHeld()
	batches := []*store.Batch{jobBatch("a"), jobBatch("b"), jobBatch("c")}
	done := make(chan []error)
	go func() { done <- commitAll(s, batches) }()
	waitQueued(t, s, len(batches))
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	release()
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Errorf("commit %d: %v", i, err)
		}
	}
	s = mustOpen(t, path)
	defer s.Close()
	for _, id := range []string{"first", "a", "b", "c"} {
		if _, err := s.Job(t.Context(), id); err != nil {
			t.Errorf("job %s after close and reopen: %v", id, err)
		}
	}
}

func commitOrFail(t *testing.T, s *Store, b *store.Batch) {
	t.Helper()
	if err := s.Commit(t.Context(), b); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// writerPath returns the file the store writes.
func (s *Store) writerPath(t *testing.T) string {
	t.Helper()
	var seq int
	var name, file string
	if err := s.writer.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		t.Fatalf("database list: %v", err)
	}
	return file
}

// Ensure the checkpointer runs after commits, without the writer's help.
func TestBackgroundCheckpoint(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "sharq.db"))
	defer s.Close()
	commitOrFail(t, s, jobBatch("a"))
	testwait.True(t, 10*time.Second, "a checkpoint after a commit", func() bool { return s.Stats().Checkpoints > 0 })
}
