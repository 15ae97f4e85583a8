package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store"
)

const jobColumns = `id, name, queue, share, status, created_at, ended_at, client_token, doc`

func scanJob(row pgx.Row) (store.Job, error) {
	var j store.Job
	err := row.Scan(&j.ID, &j.Name, &j.Queue, &j.Share, &j.Status, &j.CreatedAt, &j.EndedAt, &j.ClientToken, &j.Doc)
	return j, err
}

// Resources returns every resource, ordered by ARN.
func (s *Store) Resources(ctx context.Context) ([]store.Resource, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, arn, doc FROM resources ORDER BY arn`)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Resource, error) {
		var r store.Resource
		err := row.Scan(&r.Kind, &r.ARN, &r.Doc)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return out, nil
}

// Jobs streams every job in (CreatedAt, ID) order from one query, a
// consistent snapshot even while commits go on. Rows come off the
// connection as fn takes them, so memory stays flat however many jobs
// there are.
func (s *Store) Jobs(ctx context.Context, fn func(store.Job) error) error {
	return s.streamJobs(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY created_at, id`, fn)
}

// LiveJobs streams the jobs that have not ended, as Jobs does, through
// their own index.
func (s *Store) LiveJobs(ctx context.Context, fn func(store.Job) error) error {
	return s.streamJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE ended_at = 0 ORDER BY created_at, id`, fn)
}

func (s *Store) streamJobs(ctx context.Context, query string, fn func(store.Job) error) error {
	rows, err := s.pool.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("stream jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return fmt.Errorf("stream jobs: %w", err)
		}
		if err := fn(j); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stream jobs: %w", err)
	}
	return nil
}

// Job returns one job, or an error wrapping store.ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (store.Job, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Job{}, fmt.Errorf("get job %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Job{}, fmt.Errorf("get job %q: %w", id, err)
	}
	return j, nil
}

// EndedTokens streams the clientTokens of the ended jobs, in EndedAt
// order, from their index.
func (s *Store) EndedTokens(ctx context.Context, fn func(store.EndedToken) error) error {
	rows, err := s.pool.Query(ctx, `SELECT client_token, id, ended_at FROM jobs
		WHERE client_token <> '' AND ended_at > 0 ORDER BY ended_at`)
	if err != nil {
		return fmt.Errorf("list ended jobs' tokens: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t store.EndedToken
		if err := rows.Scan(&t.Token, &t.ID, &t.EndedAt); err != nil {
			return fmt.Errorf("list ended jobs' tokens: %w", err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list ended jobs' tokens: %w", err)
	}
	return nil
}

// CountJobs counts the jobs of each status.
func (s *Store) CountJobs(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT status, COUNT(*) FROM jobs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		out[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}

// Meta returns the value stored under key, or "" when unset.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, `SELECT v FROM meta WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get meta %q: %w", key, err)
	}
	return v, nil
}

// purgeChunk bounds one PurgeEnded statement, so it holds its row locks
// briefly.
const purgeChunk = 5000

// PurgeEnded deletes jobs with 0 < EndedAt < before, in chunks.
func (s *Store) PurgeEnded(ctx context.Context, before int64) (int, error) {
	const del = `DELETE FROM jobs WHERE id IN (
		SELECT id FROM jobs WHERE ended_at > 0 AND ended_at < $1 LIMIT $2)`
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, del, before, purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge ended jobs: %w", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < purgeChunk {
			return total, nil
		}
	}
}
