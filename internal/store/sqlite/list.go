package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/sharq-dev/sharq/internal/store"
)

// ListJobs returns one page of the jobs matching f, newest first. It reads
// one row past the page to know whether another page follows, so the last
// page never returns a cursor to an empty page.
func (s *Store) ListJobs(ctx context.Context, f store.JobFilter) ([]store.Job, string, error) {
	limit := store.PageLimit(f.Limit)
	query, args, err := listQuery(f, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	rows, err := s.readers.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	page := make([]store.Job, 0, min(limit+1, 128))
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list jobs: %w", err)
		}
		page = append(page, j)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	page = page[:limit]
	last := page[limit-1]
	return page, store.EncodeCursor(last.CreatedAt, last.ID), nil
}

// listQuery builds the page query. Every condition is a range or equality
// on an indexed column, and the order (created_at, id) ends every jobs
// index, so SQLite walks one index backwards and stops after limit rows.
func listQuery(f store.JobFilter, limit int) (string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if f.Queue != "" {
		add("queue = ?", f.Queue)
	}
	if f.Share != "" {
		add("share = ?", f.Share)
	}
	if len(f.Statuses) > 0 {
		add("status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")", anys(f.Statuses)...)
	}
	if f.NamePrefix != "" {
		addNameFilter(add, f.NamePrefix, f.NameExact)
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
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	return q, append(args, limit), nil
}

// addNameFilter matches name_lower exactly or by prefix. A prefix is the
// byte range [p, next(p)) rather than LIKE, so "_" and "%" in names are
// plain characters and the name index serves the range.
func addNameFilter(add func(string, ...any), name string, exact bool) {
	p := strings.ToLower(name)
	if exact {
		add("name_lower = ?", p)
		return
	}
	if end, ok := store.PrefixEnd(p); ok {
		add("name_lower >= ? AND name_lower < ?", p, end)
		return
	}
	add("name_lower >= ?", p)
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
