package sqlite

import (
	"context"
	"fmt"

	"github.com/sharq-dev/sharq/internal/store"
)

// Usage calls fn for every usage segment overlapping [from, to).
func (s *Store) Usage(ctx context.Context, from, to int64, fn func(store.UsageSegment) error) error {
	return s.streamUsage(ctx, `SELECT `+store.UsageColumns+` FROM usage
		WHERE start_at < ? AND (stop_at = 0 OR stop_at > ?) ORDER BY start_at, attempt, seq`, fn, to, from)
}

// OpenUsage calls fn for every usage segment still open.
func (s *Store) OpenUsage(ctx context.Context, fn func(store.UsageSegment) error) error {
	return s.streamUsage(ctx, `SELECT `+store.UsageColumns+` FROM usage WHERE stop_at = 0 ORDER BY start_at, attempt, seq`, fn)
}

func (s *Store) streamUsage(ctx context.Context, query string, fn func(store.UsageSegment) error, args ...any) error {
	rows, err := s.readers.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	return store.StreamUsage(rows, fn)
}

// PurgeUsage deletes closed usage segments with Stop < before, in chunks.
func (s *Store) PurgeUsage(ctx context.Context, before int64) (int, error) {
	const del = `DELETE FROM usage WHERE rowid IN (
		SELECT rowid FROM usage WHERE stop_at > 0 AND stop_at < ? LIMIT ?)`
	total := 0
	for {
		res, err := s.writer.ExecContext(ctx, del, before, purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge usage: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("purge usage: %w", err)
		}
		total += int(n)
		if n < purgeChunk {
			return total, nil
		}
	}
}
