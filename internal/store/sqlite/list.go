package sqlite

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/store"
)

const (
	defaultLimit = 100
	maxLimit     = 1000
)

// ListJobs returns one page of the jobs matching f, newest first. It reads
// one row past the page to know whether another page follows, so the last
// page never returns a cursor to an empty page.
func (s *Store) ListJobs(ctx context.Context, f store.JobFilter) ([]store.Job, string, error) {
	limit := pageLimit(f.Limit)
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
	return page, encodeCursor(last.CreatedAt, last.ID), nil
}

func pageLimit(n int) int {
	switch {
	case n <= 0:
		return defaultLimit
	case n > maxLimit:
		return maxLimit
	}
	return n
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
		createdAt, id, err := decodeCursor(f.After)
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
	if end, ok := prefixEnd(p); ok {
		add("name_lower >= ? AND name_lower < ?", p, end)
		return
	}
	add("name_lower >= ?", p)
}

// prefixEnd returns the smallest string greater than every string with
// prefix p, or false when there is none (p is all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// encodeCursor names the last job of a page by its sort key, so the next
// page starts strictly after it even when other jobs share its CreatedAt,
// and jobs committed meanwhile do not shift the pages.
func encodeCursor(createdAt int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(createdAt, 10) + ":" + id))
}

func decodeCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", fmt.Errorf("decode cursor: %w", store.ErrInvalidCursor)
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return 0, "", fmt.Errorf("decode cursor: %w", store.ErrInvalidCursor)
	}
	createdAt, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("decode cursor: %w", store.ErrInvalidCursor)
	}
	return createdAt, id, nil
}
