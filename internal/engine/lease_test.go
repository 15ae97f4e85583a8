package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// fakeLease is a lease that is held until told otherwise; its Done never
// closes, as when the server was paused past the lease and has not yet
// noticed.
type fakeLease struct{ held atomic.Bool }

func (l *fakeLease) Term() int64           { return 1 }
func (l *fakeLease) Held() bool            { return l.held.Load() }
func (l *fakeLease) Done() <-chan struct{} { return nil }

// refusingStore refuses commits once told to, as a shared store refuses a
// leader whose lease another server took over.
type refusingStore struct {
	*sqlite.Store
	refuse atomic.Bool
}

func (s *refusingStore) Commit(ctx context.Context, b *store.Batch) error {
	if s.refuse.Load() {
		return errors.New("terminating connection due to idle-in-transaction timeout")
	}
	return s.Store.Commit(ctx, b)
}

// Ensure a commit refused after the lease ended stops Run with
// ErrLeaseLost, the cause, and a commit refused while the lease is held
// with the commit's error.
func TestCommitRefusedAfterLeaseEnded(t *testing.T) {
	for _, held := range []bool{false, true} {
		dir := t.TempDir()
		sq, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
		if err != nil {
			t.Fatal(err)
		}
		st := &refusingStore{Store: sq}
		lease := &fakeLease{}
		lease.held.Store(true)
		ex := simulated.New()
		e, err := engine.New(context.Background(), engine.Options{Store: st, Executor: ex, Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()
		lease.held.Store(held)
		st.refuse.Store(true)
		if _, err := e.CreateSchedulingPolicy(context.Background(), batchmodel.CreateSchedulingPolicyInput{Name: "p"}); err == nil {
			t.Fatal("a refused commit was acknowledged")
		}
		select {
		case err := <-done:
			if lost := errors.Is(err, engine.ErrLeaseLost); lost == held {
				t.Errorf("lease held %v: Run returned %v", held, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("lease held %v: Run goes on after a refused commit", held)
		}
		ex.Close()
		sq.Close()
	}
}
