package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store"
)

// Commit queues b for the write loop and waits until it is durable. If ctx
// ends while b is still queued, b is dropped and Commit returns ctx's
// error; once the writer has taken b, Commit waits for the transaction, so
// an error always means b was not written. Once the store holds a lease, a
// commit after another server took the lease over fails with
// store.ErrFenced.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	return s.commits.Commit(ctx, b)
}

// writeAlone tells whether a failed group is written again batch by batch:
// not when it was fenced, which every batch would be.
func writeAlone(err error) bool { return !errors.Is(err, store.ErrFenced) }

const (
	upsertResourceSQL = `INSERT INTO resources (arn, kind, doc) VALUES ($1, $2, $3)
		ON CONFLICT (arn) DO UPDATE SET kind = excluded.kind, doc = excluded.doc`
	deleteResourceSQL = `DELETE FROM resources WHERE arn = $1`
	// The jobs of a group go in one statement, as arrays.
	upsertJobsSQL = `INSERT INTO jobs (id, name, name_lower, queue, share, status, created_at, ended_at, client_token, doc)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
			$7::bigint[], $8::bigint[], $9::text[], $10::bytea[])
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_lower = excluded.name_lower,
			queue = excluded.queue, share = excluded.share, status = excluded.status,
			created_at = excluded.created_at, ended_at = excluded.ended_at,
			client_token = excluded.client_token, doc = excluded.doc`
	upsertMetaSQL = `INSERT INTO meta (k, v) SELECT * FROM unnest($1::text[], $2::text[])
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`
	// fenceSQL reads the lease under a share lock held to the commit: a
	// takeover (which updates the row) waits for this transaction, and
	// one that committed first has changed the term.
	fenceSQL = `SELECT term, holder FROM leader WHERE id = 1 FOR SHARE`
)

// writeTx writes the batches of group in one transaction, its statements
// pipelined in one round trip.
func (s *Store) writeTx(group []*store.Batch) error {
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("commit batch: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if l := s.fence.Load(); l == lostLease {
		return fmt.Errorf("commit batch: %w", store.ErrFenced)
	} else if l != nil {
		var term int64
		var holder string
		if err := tx.QueryRow(ctx, fenceSQL).Scan(&term, &holder); err != nil {
			return fmt.Errorf("commit batch: read the lease: %w", err)
		}
		if term != l.term || holder != l.holder {
			l.lose(fmt.Errorf("term %d of %q took over", term, holder))
			return fmt.Errorf("commit batch: term %d: %w", l.term, store.ErrFenced)
		}
	}
	var batch pgx.Batch
	jobs := map[string]store.Job{}
	meta := map[string]string{}
	usage := map[usageKey]store.UsageSegment{}
	var preempted []string
	for _, b := range group {
		// Resources in order, each batch's deletions after its upserts.
		for _, res := range b.Resources {
			batch.Queue(upsertResourceSQL, res.ARN, res.Kind, docOrEmpty(res.Doc))
		}
		for _, arn := range b.DeletedResources {
			batch.Queue(deleteResourceSQL, arn)
		}
		// Jobs and meta by key: the later entry wins.
		for _, j := range b.Jobs {
			jobs[j.ID] = j
		}
		for k, v := range b.Meta {
			meta[k] = v
		}
		for _, u := range b.Usage {
			if prev, ok := usage[usageKey{u.Attempt, u.Seq}]; ok && prev.Preempted {
				u.Preempted = true
			}
			usage[usageKey{u.Attempt, u.Seq}] = u
		}
		preempted = append(preempted, b.PreemptedAttempts...)
	}
	if len(jobs) > 0 {
		queueJobs(&batch, jobs)
	}
	if len(meta) > 0 {
		var ks, vs []string
		for k, v := range meta {
			ks, vs = append(ks, k), append(vs, v)
		}
		batch.Queue(upsertMetaSQL, ks, vs)
	}
	queueUsage(&batch, usage, preempted)
	if batch.Len() > 0 {
		if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
			return fmt.Errorf("commit batch: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	s.txs.Add(1)
	s.batches.Add(int64(len(group)))
	return nil
}

func queueJobs(b *pgx.Batch, jobs map[string]store.Job) {
	n := len(jobs)
	ids, names, lower, queues, shares, statuses, tokens := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n),
		make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	created, ended := make([]int64, 0, n), make([]int64, 0, n)
	docs := make([][]byte, 0, n)
	for _, j := range jobs {
		ids, names, lower = append(ids, j.ID), append(names, j.Name), append(lower, strings.ToLower(j.Name))
		queues, shares, statuses = append(queues, j.Queue), append(shares, j.Share), append(statuses, j.Status)
		created, ended, tokens = append(created, j.CreatedAt), append(ended, j.EndedAt), append(tokens, j.ClientToken)
		docs = append(docs, docOrEmpty(j.Doc))
	}
	b.Queue(upsertJobsSQL, ids, names, lower, queues, shares, statuses, created, ended, tokens, docs)
}

// docOrEmpty stores a nil Doc as empty: pgx sends nil as NULL, which the
// NOT NULL columns refuse.
func docOrEmpty(doc []byte) []byte {
	if doc == nil {
		return []byte{}
	}
	return doc
}
