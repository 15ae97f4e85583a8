// Package groupcommit gathers the batches of concurrent commits into
// groups, each written by one call (one transaction, one sync), so that
// many callers share the cost of making their writes durable.
package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sharq-dev/sharq/internal/store"
)

// Config is what a store gives its queue.
type Config struct {
	// MaxGroup caps how many batches one write takes.
	MaxGroup int
	// Write makes the batches of a group durable, all or none.
	Write func(group []*store.Batch) error
	// Alone, when set, tells whether a failed group is written again
	// batch by batch (so one bad batch fails alone); nil means always.
	Alone func(err error) bool
	// Closed is what Commit returns after Close.
	Closed error
}

// Queue is the write loop and the commits waiting for it.
type Queue struct {
	cfg     Config
	mu      sync.RWMutex // guards closed and sends on reqs
	closed  bool
	reqs    chan *request
	stopped chan struct{} // closed when the write loop has drained reqs
}

// A request is one Commit waiting for the write loop.
type request struct {
	batch *store.Batch
	state atomic.Int32 // queued, then taken by the writer or abandoned by its caller
	done  chan error   // buffered: the writer never waits for the caller
}

const (
	queued int32 = iota
	taken
	abandoned
)

// Start starts the write loop.
func Start(cfg Config) *Queue {
	cfg.MaxGroup = max(cfg.MaxGroup, 1)
	q := &Queue{cfg: cfg, reqs: make(chan *request, cfg.MaxGroup), stopped: make(chan struct{})}
	go q.run()
	return q
}

// Commit queues b for the write loop and waits until it is durable. If ctx
// ends while b is still queued, b is dropped and Commit returns ctx's error;
// once the writer has taken b, Commit waits for the write, so an error
// always means b was not written.
func (q *Queue) Commit(ctx context.Context, b *store.Batch) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	r := &request{batch: b, done: make(chan error, 1)}
	if err := q.enqueue(ctx, r); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return fmt.Errorf("commit batch: %w", ctx.Err())
		}
		return <-r.done
	}
}

// Queued is how many commits wait for the write loop.
func (q *Queue) Queued() int { return len(q.reqs) }

// Close waits until the commits already queued are written; later ones
// fail with cfg.Closed. Calling it again does nothing.
func (q *Queue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.reqs)
	}
	q.mu.Unlock()
	<-q.stopped
}

// enqueue hands r to the write loop. The read lock keeps Close from
// closing reqs during the send.
func (q *Queue) enqueue(ctx context.Context, r *request) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return q.cfg.Closed
	}
	select {
	case q.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run takes the oldest request and everything queued behind it and writes
// them as one group, until Close closes reqs.
func (q *Queue) run() {
	defer close(q.stopped)
	for r := range q.reqs {
		q.writeGroup(q.gather(r))
	}
}

// gather returns first and the requests already queued behind it, up to
// MaxGroup, leaving out those whose callers gave up.
func (q *Queue) gather(first *request) []*request {
	group := claim(make([]*request, 0, 8), first)
	for len(group) < q.cfg.MaxGroup {
		select {
		case r, ok := <-q.reqs:
			if !ok {
				return group
			}
			group = claim(group, r)
		default:
			return group
		}
	}
	return group
}

func claim(group []*request, r *request) []*request {
	if r.state.CompareAndSwap(queued, taken) {
		return append(group, r)
	}
	return group
}

// writeGroup writes the group and answers every request. If that fails,
// it writes each batch alone (unless cfg.Alone says not to), so one bad
// batch fails alone.
func (q *Queue) writeGroup(group []*request) {
	if len(group) == 0 {
		return
	}
	batches := make([]*store.Batch, len(group))
	for i, r := range group {
		batches[i] = r.batch
	}
	err := q.cfg.Write(batches)
	if err != nil && len(group) > 1 && (q.cfg.Alone == nil || q.cfg.Alone(err)) {
		for i, r := range group {
			r.done <- q.cfg.Write(batches[i : i+1])
		}
		return
	}
	for _, r := range group {
		r.done <- err
	}
}
