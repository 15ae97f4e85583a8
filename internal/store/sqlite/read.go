package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/sharq-dev/sharq/internal/store"
)

const jobColumns = `id, name, queue, share, status, created_at, ended_at, client_token, doc`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanJob(sc scanner) (store.Job, error) {
	var j store.Job
	err := sc.Scan(&j.ID, &j.Name, &j.Queue, &j.Share, &j.Status, &j.CreatedAt, &j.EndedAt, &j.ClientToken, &j.Doc)
	return j, err
}

// Resources returns every resource, ordered by ARN.
func (s *Store) Resources(ctx context.Context) ([]store.Resource, error) {
	rows, err := s.readers.QueryContext(ctx, `SELECT kind, arn, doc FROM resources ORDER BY arn`)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	defer rows.Close()
	var out []store.Resource
	for rows.Next() {
		var r store.Resource
		if err := rows.Scan(&r.Kind, &r.ARN, &r.Doc); err != nil {
			return nil, fmt.Errorf("list resources: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return out, nil
}

// jobsChunk is how many jobs Jobs reads ahead at a time.
const jobsChunk = 512

// Jobs streams every job in (CreatedAt, ID) order from one read
// transaction, so fn sees a consistent snapshot even while commits go on.
// A goroutine reads a few chunks ahead, so fn's work (decoding, rebuilding
// the core on start) runs alongside SQLite's; memory stays flat however
// many jobs there are.
func (s *Store) Jobs(ctx context.Context, fn func(store.Job) error) error {
	return s.streamJobs(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY created_at, id`, true, fn)
}

// LiveJobs streams the jobs that have not ended, as Jobs does. They lie
// scattered among the ended ones, so the scan reads their pages without
// the memory map, which would map the pages around each of them too and
// leave the file's pages counted in the server's resident memory.
func (s *Store) LiveJobs(ctx context.Context, fn func(store.Job) error) error {
	return s.streamJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE ended_at = 0 ORDER BY created_at, id`, false, fn)
}

func (s *Store) streamJobs(ctx context.Context, query string, mapped bool, fn func(store.Job) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan []store.Job, 4)
	readErr := make(chan error, 1)
	go func() { readErr <- s.readJobs(ctx, query, mapped, chunks) }()
	for chunk := range chunks {
		for _, j := range chunk {
			if err := fn(j); err != nil {
				cancel()
				for range chunks {
				}
				<-readErr
				return err
			}
		}
	}
	return <-readErr
}

// unmapped returns a reader connection that reads pages without the
// memory map until it is closed: for scans over the whole file that keep
// few of its pages (counting by an index, rows scattered through it),
// whose mapped pages would all be counted in the server's resident memory.
func (s *Store) unmapped(ctx context.Context) (*unmappedConn, error) {
	conn, err := s.readers.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := unmap(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	return &unmappedConn{conn}, nil
}

type unmappedConn struct{ *sql.Conn }

// Close maps the connection's pages again and returns it to the pool.
func (c *unmappedConn) Close() error {
	c.ExecContext(context.Background(), fmt.Sprintf(`PRAGMA mmap_size = %d`, mmapSize))
	return c.Conn.Close()
}

func unmap(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 0`)
	return err
}

// readJobs sends every job to out in chunks, in Jobs order, and closes out.
// It reads the driver's rows directly: database/sql's Scan would copy every
// doc a second time and costs a third more CPU per job, which is most of
// the store's share of a restart.
func (s *Store) readJobs(ctx context.Context, query string, mapped bool, out chan<- []store.Job) error {
	defer close(out)
	var conn interface {
		Raw(func(any) error) error
		Close() error
	}
	var err error
	if mapped {
		conn, err = s.readers.Conn(ctx)
	} else {
		conn, err = s.unmapped(ctx)
	}
	if err != nil {
		return fmt.Errorf("stream jobs: %w", err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error { return streamRows(ctx, dc, query, out) }); err != nil {
		return fmt.Errorf("stream jobs: %w", err)
	}
	return nil
}

func streamRows(ctx context.Context, dc any, query string, out chan<- []store.Job) error {
	q, ok := dc.(driver.QueryerContext)
	if !ok {
		return fmt.Errorf("driver connection %T cannot query", dc)
	}
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	send := func(chunk []store.Job) error {
		select {
		case out <- chunk:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	dest := make([]driver.Value, len(rows.Columns()))
	chunk := make([]store.Job, 0, jobsChunk)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		j, err := jobFromValues(dest)
		if err != nil {
			return err
		}
		if chunk = append(chunk, j); len(chunk) == jobsChunk {
			if err := send(chunk); err != nil {
				return err
			}
			chunk = make([]store.Job, 0, jobsChunk)
		}
	}
	if len(chunk) == 0 {
		return nil
	}
	return send(chunk)
}

// jobFromValues converts a row of jobColumns as the driver returns it. The
// tables are STRICT, so each column has one type; the driver returns an
// empty BLOB as nil.
func jobFromValues(v []driver.Value) (store.Job, error) {
	var j store.Job
	var ok [9]bool
	j.ID, ok[0] = v[0].(string)
	j.Name, ok[1] = v[1].(string)
	j.Queue, ok[2] = v[2].(string)
	j.Share, ok[3] = v[3].(string)
	j.Status, ok[4] = v[4].(string)
	j.CreatedAt, ok[5] = v[5].(int64)
	j.EndedAt, ok[6] = v[6].(int64)
	j.ClientToken, ok[7] = v[7].(string)
	j.Doc, ok[8] = v[8].([]byte)
	ok[8] = ok[8] || v[8] == nil
	for i, good := range ok {
		if !good {
			return store.Job{}, fmt.Errorf("column %d of job %v: unexpected %T", i, v[0], v[i])
		}
	}
	return j, nil
}

// Job returns one job, or an error wrapping store.ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (store.Job, error) {
	row := s.readers.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id)
	j, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Job{}, fmt.Errorf("get job %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Job{}, fmt.Errorf("get job %q: %w", id, err)
	}
	return j, nil
}

// EndedTokens streams the clientTokens of the ended jobs, in EndedAt order,
// from their index alone. Like the live jobs, it reads the driver's rows
// directly: database/sql's Scan costs as much again per row, and a store
// of a million jobs holds hundreds of thousands of tokens.
func (s *Store) EndedTokens(ctx context.Context, fn func(store.EndedToken) error) error {
	conn, err := s.unmapped(ctx)
	if err != nil {
		return fmt.Errorf("list ended jobs' tokens: %w", err)
	}
	defer conn.Close()
	const query = `SELECT client_token, id, ended_at FROM jobs INDEXED BY jobs_ended_tokens
		WHERE client_token <> '' AND ended_at > 0 ORDER BY ended_at`
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot query", dc)
		}
		rows, err := q.QueryContext(ctx, query, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, 3)
		for {
			err := rows.Next(dest)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			var t store.EndedToken
			var ok [3]bool
			t.Token, ok[0] = dest[0].(string)
			t.ID, ok[1] = dest[1].(string)
			t.EndedAt, ok[2] = dest[2].(int64)
			if !ok[0] || !ok[1] || !ok[2] {
				return fmt.Errorf("unexpected row %T %T %T", dest[0], dest[1], dest[2])
			}
			if err := fn(t); err != nil {
				return errCallback{err}
			}
		}
	})
	if cb, ok := err.(errCallback); ok {
		return cb.err
	}
	if err != nil {
		return fmt.Errorf("list ended jobs' tokens: %w", err)
	}
	return nil
}

// errCallback carries a callback's own error through Raw, to be returned
// as it is.
type errCallback struct{ err error }

func (e errCallback) Error() string { return e.err.Error() }

// CountJobs counts the jobs of each status.
func (s *Store) CountJobs(ctx context.Context) (map[string]int, error) {
	conn, err := s.unmapped(ctx)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT status, COUNT(*) FROM jobs GROUP BY status`)
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
	err := s.readers.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get meta %q: %w", key, err)
	}
	return v, nil
}

// purgeChunk bounds one PurgeEnded transaction, so commits queued behind a
// large purge wait for one chunk, not for all of it.
const purgeChunk = 5000

// PurgeEnded deletes jobs with 0 < EndedAt < before, in chunks.
func (s *Store) PurgeEnded(ctx context.Context, before int64) (int, error) {
	const del = `DELETE FROM jobs WHERE rowid IN (
		SELECT rowid FROM jobs WHERE ended_at > 0 AND ended_at < ? LIMIT ?)`
	total := 0
	for {
		res, err := s.writer.ExecContext(ctx, del, before, purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge ended jobs: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("purge ended jobs: %w", err)
		}
		total += int(n)
		if n < purgeChunk {
			return total, nil
		}
	}
}
