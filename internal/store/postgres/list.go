package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store"
)

// ListJobs returns one page of the jobs matching f, newest first. It reads
// one row past the page to know whether another page follows.
func (s *Store) ListJobs(ctx context.Context, f store.JobFilter) ([]store.Job, string, error) {
	limit := store.PageLimit(f.Limit)
	query, args, err := listQuery(f, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Job, error) { return scanJob(row) })
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	page = page[:limit]
	last := page[limit-1]
	return page, store.EncodeCursor(last.CreatedAt, last.ID), nil
}

// listQuery builds the page query: every condition is a range or equality
// on an indexed column, and (created_at, id) ends every jobs index.
func listQuery(f store.JobFilter, limit int) (string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		for _, v := range a {
			args = append(args, v)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if f.Queue != "" {
		add("queue = ?", f.Queue)
	}
	if f.Share != "" {
		add("share = ?", f.Share)
	}
	if len(f.Statuses) > 0 {
		add("status = ANY(?)", f.Statuses)
	}
	if p := strings.ToLower(f.NamePrefix); p != "" {
		switch end, ok := store.PrefixEnd(p); {
		case f.NameExact:
			add("name_lower = ?", p)
		case ok:
			add("name_lower >= ? AND name_lower < ?", p, end)
		default:
			add("name_lower >= ?", p)
		}
	}
	if f.CreatedAfter != 0 {
		add("created_at > ?", f.CreatedAfter)
	}
	if f.CreatedBefore != 0 {
		add("created_at < ?", f.CreatedBefore)
	}
	if f.After != "" {
		createdAt, id, err := store.DecodeCursor(f.After)
		if err != nil {
			return "", nil, err
		}
		add("(created_at, id) < (?, ?)", createdAt, id)
	}
	q := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	args = append(args, limit)
	q += ` ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	return q, args, nil
}
