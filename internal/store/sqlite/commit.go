package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/sharq-dev/sharq/internal/store"
)

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

// Commit queues b for the write loop and waits until it is durable. If ctx
// ends while b is still queued, b is dropped and Commit returns ctx's error;
// once the writer has taken b, Commit waits for the transaction, so an error
// always means b was not written.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	r := &request{batch: b, done: make(chan error, 1)}
	if err := s.enqueue(ctx, r); err != nil {
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

// enqueue hands r to the write loop. The read lock keeps Close from
// closing reqs during the send.
func (s *Store) enqueue(ctx context.Context, r *request) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case s.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the write loop: it takes the oldest request and everything queued
// behind it and writes them as one group, until Close closes reqs.
func (s *Store) run() {
	defer close(s.stopped)
	defer close(s.kick)
	for r := range s.reqs {
		s.writeGroup(s.gather(r))
	}
}

// gather returns first and the requests already queued behind it, up to
// maxGroup, leaving out those whose callers gave up.
func (s *Store) gather(first *request) []*request {
	group := claim(make([]*request, 0, 8), first)
	for len(group) < s.opts.maxGroup {
		select {
		case r, ok := <-s.reqs:
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

// writeGroup writes the group in one transaction and answers every
// request. If that fails, it writes each batch in its own transaction, so
// one bad batch fails alone.
func (s *Store) writeGroup(group []*request) {
	if len(group) == 0 {
		return
	}
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	err := s.writeTx(group)
	if err != nil && len(group) > 1 {
		for i, r := range group {
			r.done <- s.writeTx(group[i : i+1])
		}
		return
	}
	for _, r := range group {
		r.done <- err
	}
}

// writeTx writes the batches of group in one transaction. The transaction
// does not take any caller's context: it serves them all.
func (s *Store) writeTx(group []*request) error {
	ctx := context.Background()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("commit batch: begin: %w", err)
	}
	defer tx.Rollback()
	w := s.stmts.in(ctx, tx)
	defer w.close()
	for _, r := range group {
		if err := w.apply(r.batch); err != nil {
			return fmt.Errorf("commit batch: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	s.txs.Add(1)
	s.batches.Add(int64(len(group)))
	s.kickCheckpoint()
	return nil
}

// writeStmts are the write statements, prepared once on the writer
// connection.
type writeStmts struct {
	upsertJob, upsertResource, deleteResource, upsertMeta *sql.Stmt
}

const (
	upsertJobSQL = `INSERT INTO jobs (id, name, name_lower, queue, share, status, created_at, ended_at, client_token, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_lower = excluded.name_lower,
			queue = excluded.queue, share = excluded.share, status = excluded.status,
			created_at = excluded.created_at, ended_at = excluded.ended_at,
			client_token = excluded.client_token, doc = excluded.doc`
	upsertResourceSQL = `INSERT INTO resources (arn, kind, doc) VALUES (?, ?, ?)
		ON CONFLICT (arn) DO UPDATE SET kind = excluded.kind, doc = excluded.doc`
	deleteResourceSQL = `DELETE FROM resources WHERE arn = ?`
	upsertMetaSQL     = `INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
)

func prepareWrites(ctx context.Context, db *sql.DB) (*writeStmts, error) {
	var w writeStmts
	var errs []error
	prep := func(query string) *sql.Stmt {
		st, err := db.PrepareContext(ctx, query)
		errs = append(errs, err)
		return st
	}
	w.upsertJob = prep(upsertJobSQL)
	w.upsertResource = prep(upsertResourceSQL)
	w.deleteResource = prep(deleteResourceSQL)
	w.upsertMeta = prep(upsertMetaSQL)
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(fmt.Errorf("prepare writes: %w", err), w.close())
	}
	return &w, nil
}

// in returns the statements bound to tx.
func (w *writeStmts) in(ctx context.Context, tx *sql.Tx) *writeStmts {
	return &writeStmts{
		upsertJob:      tx.StmtContext(ctx, w.upsertJob),
		upsertResource: tx.StmtContext(ctx, w.upsertResource),
		deleteResource: tx.StmtContext(ctx, w.deleteResource),
		upsertMeta:     tx.StmtContext(ctx, w.upsertMeta),
	}
}

func (w *writeStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.upsertJob, w.upsertResource, w.deleteResource, w.upsertMeta} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// apply writes one batch: resources, then deletions (so an ARN in both
// ends deleted), then jobs and meta.
func (w *writeStmts) apply(b *store.Batch) error {
	for _, r := range b.Resources {
		if _, err := w.upsertResource.Exec(r.ARN, r.Kind, docOrEmpty(r.Doc)); err != nil {
			return fmt.Errorf("upsert resource %q: %w", r.ARN, err)
		}
	}
	for _, arn := range b.DeletedResources {
		if _, err := w.deleteResource.Exec(arn); err != nil {
			return fmt.Errorf("delete resource %q: %w", arn, err)
		}
	}
	for _, j := range b.Jobs {
		if _, err := w.upsertJob.Exec(j.ID, j.Name, strings.ToLower(j.Name), j.Queue, j.Share,
			j.Status, j.CreatedAt, j.EndedAt, j.ClientToken, docOrEmpty(j.Doc)); err != nil {
			return fmt.Errorf("upsert job %q: %w", j.ID, err)
		}
	}
	for k, v := range b.Meta {
		if _, err := w.upsertMeta.Exec(k, v); err != nil {
			return fmt.Errorf("upsert meta %q: %w", k, err)
		}
	}
	return nil
}

// docOrEmpty stores a nil Doc as an empty blob: the driver binds nil as
// NULL, which the NOT NULL columns refuse.
func docOrEmpty(doc []byte) []byte {
	if doc == nil {
		return []byte{}
	}
	return doc
}
