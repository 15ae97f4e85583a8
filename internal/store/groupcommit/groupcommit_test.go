package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/testwait"
)

var errClosed = errors.New("closed")

// recorder is a Write that remembers each group's batch IDs, fails any
// group holding a batch named "bad", and can be held before its first
// group.
type recorder struct {
	mu     sync.Mutex
	groups [][]string
	held   chan struct{} // closed when the first write starts
	hold   chan struct{} // the first write waits for it
	fail   error
}

func newRecorder() *recorder {
	return &recorder{held: make(chan struct{}), hold: make(chan struct{}), fail: errors.New("bad batch")}
}

func (r *recorder) write(group []*store.Batch) error {
	r.mu.Lock()
	first := r.groups == nil
	var ids []string
	for _, b := range group {
		ids = append(ids, b.Jobs[0].ID)
	}
	r.groups = append(r.groups, ids)
	r.mu.Unlock()
	if first {
		close(r.held)
		<-r.hold
	}
	for _, id := range ids {
		if id == "bad" {
			return r.fail
		}
	}
	return nil
}

func batch(id string) *store.Batch { return &store.Batch{Jobs: []store.Job{{ID: id}}} }

func waitQueued(t *testing.T, q *Queue, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() error {
		if got := q.Queued(); got < n {
			return fmt.Errorf("%d commits queued, want %d", got, n)
		}
		return nil
	})
}

// commitAsync commits b and returns where its answer arrives.
func commitAsync(ctx context.Context, q *Queue, id string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- q.Commit(ctx, batch(id)) }()
	return done
}

func TestGroupsWhatQueuedAndFailsABadBatchAlone(t *testing.T) {
	rec := newRecorder()
	q := Start(Config{MaxGroup: 10, Write: rec.write, Closed: errClosed})
	defer q.Close()

	first := commitAsync(context.Background(), q, "first")
	<-rec.held
	ctx, cancel := context.WithCancel(context.Background())
	a := commitAsync(context.Background(), q, "a")
	waitQueued(t, q, 1)
	gaveUp := commitAsync(ctx, q, "gave-up")
	waitQueued(t, q, 2)
	bad := commitAsync(context.Background(), q, "bad")
	waitQueued(t, q, 3)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned commit: %v, want context.Canceled", err)
	}
	close(rec.hold)

	for name, ch := range map[string]<-chan error{"first": first, "a": a} {
		if err := <-ch; err != nil {
			t.Errorf("commit %s: %v", name, err)
		}
	}
	if err := <-bad; !errors.Is(err, rec.fail) {
		t.Errorf("bad commit: %v, want %v", err, rec.fail)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := [][]string{{"first"}, {"a", "bad"}, {"a"}, {"bad"}}
	if len(rec.groups) != len(want) {
		t.Fatalf("groups %v, want %v (the abandoned batch is never written)", rec.groups, want)
	}
	for i := range want {
		if len(rec.groups[i]) != len(want[i]) || rec.groups[i][0] != want[i][0] {
			t.Fatalf("groups %v, want %v (the abandoned batch is never written)", rec.groups, want)
		}
	}
}

func TestAloneFalseFailsTheWholeGroup(t *testing.T) {
	rec := newRecorder()
	q := Start(Config{MaxGroup: 10, Write: rec.write, Alone: func(error) bool { return false }, Closed: errClosed})
	defer q.Close()
	first := commitAsync(context.Background(), q, "first")
	<-rec.held
	a := commitAsync(context.Background(), q, "a")
	waitQueued(t, q, 1)
	bad := commitAsync(context.Background(), q, "bad")
	waitQueued(t, q, 2)
	close(rec.hold)
	if err := <-first; err != nil {
		t.Fatalf("first: %v", err)
	}
	for name, ch := range map[string]<-chan error{"a": a, "bad": bad} {
		if err := <-ch; !errors.Is(err, rec.fail) {
			t.Errorf("commit %s: %v, want the group's error", name, err)
		}
	}
	if len(rec.groups) != 2 {
		t.Errorf("groups %v: a failed group must not be split when Alone says no", rec.groups)
	}
}

func TestCloseWritesWhatIsQueuedThenRefuses(t *testing.T) {
	rec := newRecorder()
	q := Start(Config{MaxGroup: 10, Write: rec.write, Closed: errClosed})
	first := commitAsync(context.Background(), q, "first")
	<-rec.held
	a := commitAsync(context.Background(), q, "a")
	waitQueued(t, q, 1)
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	close(rec.hold)
	<-closed
	for name, ch := range map[string]<-chan error{"first": first, "a": a} {
		if err := <-ch; err != nil {
			t.Errorf("commit %s queued before Close: %v", name, err)
		}
	}
	if err := q.Commit(context.Background(), batch("late")); !errors.Is(err, errClosed) {
		t.Errorf("commit after Close: %v, want %v", err, errClosed)
	}
	q.Close() // again: does nothing
}
