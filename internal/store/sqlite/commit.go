package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sharq-dev/sharq/internal/store"
)

// Commit queues b for the write loop and waits until it is durable. If ctx
// ends while b is still queued, b is dropped and Commit returns ctx's error;
// once the writer has taken b, Commit waits for the transaction, so an error
// always means b was not written.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	return s.commits.Commit(ctx, b)
}

// writeGroup is the group commit's write: one transaction.
func (s *Store) writeGroup(group []*store.Batch) error {
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	return s.writeTx(group)
}

// writeTx writes the batches of group in one transaction. The transaction
// does not take any caller's context: it serves them all.
func (s *Store) writeTx(group []*store.Batch) error {
	ctx := context.Background()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("commit batch: begin: %w", err)
	}
	defer tx.Rollback()
	w := s.stmts.in(ctx, tx)
	defer w.close()
	for _, b := range group {
		if err := w.apply(b); err != nil {
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
	upsertUsage, markPreempted                            *sql.Stmt
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
	upsertUsageSQL    = `INSERT INTO usage (` + store.UsageColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (attempt, seq) DO UPDATE SET job = excluded.job, queue = excluded.queue, share = excluded.share,
			share_id = excluded.share_id, owner = excluded.owner, kind = excluded.kind, peer = excluded.peer,
			instances = excluded.instances, gpus = excluded.gpus, start_at = excluded.start_at,
			stop_at = excluded.stop_at, preempted = excluded.preempted OR usage.preempted`
	markPreemptedSQL = `UPDATE usage SET preempted = 1 WHERE attempt = ?`
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
	w.upsertUsage = prep(upsertUsageSQL)
	w.markPreempted = prep(markPreemptedSQL)
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
		upsertUsage:    tx.StmtContext(ctx, w.upsertUsage),
		markPreempted:  tx.StmtContext(ctx, w.markPreempted),
	}
}

func (w *writeStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.upsertJob, w.upsertResource, w.deleteResource, w.upsertMeta, w.upsertUsage, w.markPreempted} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// apply writes one batch: resources, then deletions (so an ARN in both
// ends deleted), then jobs and meta, then usage.
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
	for _, u := range b.Usage {
		if _, err := w.upsertUsage.Exec(u.Attempt, u.Seq, u.Job, u.Queue, u.Share, u.ShareID, u.Owner, u.Kind, u.Peer,
			u.Instances, u.GPUs, u.Start, u.Stop, u.Preempted); err != nil {
			return fmt.Errorf("upsert usage %q/%d: %w", u.Attempt, u.Seq, err)
		}
	}
	for _, a := range b.PreemptedAttempts {
		if _, err := w.markPreempted.Exec(a); err != nil {
			return fmt.Errorf("mark usage of %q preempted: %w", a, err)
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
