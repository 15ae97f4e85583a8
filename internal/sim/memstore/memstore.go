// Package memstore is store.Store in memory, for the simulator: a run of a
// million jobs cannot afford a synced database commit per scheduling cycle,
// and a simulation has nothing to recover after a crash. It passes the
// storetest conformance suite; "durable" means until the process ends, and
// a store reopened with Reopen sees what was committed before Close.
package memstore

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sharq-dev/sharq/internal/store"
)

// ErrClosed is returned by Commit after Close.
var ErrClosed = errors.New("store closed")

// Store keeps resources, jobs and meta values in maps.
type Store struct {
	mu     sync.RWMutex
	d      *data
	closed bool
}

// data is what survives Close, for Reopen.
type data struct {
	resources map[string]store.Resource
	jobs      map[string]store.Job
	meta      map[string]string
	// ended holds (EndedAt, ID) of every ended job committed, so a purge
	// costs what it removes rather than a scan of every job. An entry whose
	// job has since changed is skipped.
	ended endHeap
}

type endMark struct {
	at int64
	id string
}

// endHeap is a min-heap of end marks by time.
type endHeap []endMark

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(endMark)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{d: &data{resources: map[string]store.Resource{}, jobs: map[string]store.Job{}, meta: map[string]string{}}}
}

// Reopen returns a new store over what s held, as opening a database file
// again would. s should be closed.
func Reopen(s *Store) *Store {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &Store{d: s.d}
}

// Commit applies the batch at once; a batch with an empty key changes
// nothing.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := check(b); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, r := range b.Resources {
		s.d.resources[r.ARN] = r
	}
	for _, arn := range b.DeletedResources {
		delete(s.d.resources, arn)
	}
	for _, j := range b.Jobs {
		if old, ok := s.d.jobs[j.ID]; j.EndedAt > 0 && (!ok || old.EndedAt != j.EndedAt) {
			heap.Push(&s.d.ended, endMark{at: j.EndedAt, id: j.ID})
		}
		s.d.jobs[j.ID] = j
	}
	for k, v := range b.Meta {
		s.d.meta[k] = v
	}
	return nil
}

func check(b *store.Batch) error {
	for _, r := range b.Resources {
		if r.ARN == "" {
			return errors.New("commit: resource with an empty ARN")
		}
	}
	for _, j := range b.Jobs {
		if j.ID == "" {
			return errors.New("commit: job with an empty ID")
		}
	}
	for k := range b.Meta {
		if k == "" {
			return errors.New("commit: meta value with an empty key")
		}
	}
	return nil
}

// Resources returns every resource ordered by ARN.
func (s *Store) Resources(ctx context.Context) ([]store.Resource, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]store.Resource, 0, len(s.d.resources))
	for _, r := range s.d.resources {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b store.Resource) int { return cmp.Compare(a.ARN, b.ARN) })
	return out, nil
}

// Jobs calls fn for every job in CreatedAt then ID order. It works on a
// copy taken first, so fn may read the store.
func (s *Store) Jobs(ctx context.Context, fn func(store.Job) error) error {
	return s.each(func(store.Job) bool { return true }, fn)
}

// LiveJobs calls fn for every job that has not ended, as Jobs does.
func (s *Store) LiveJobs(ctx context.Context, fn func(store.Job) error) error {
	return s.each(func(j store.Job) bool { return j.EndedAt == 0 }, fn)
}

func (s *Store) each(keep func(store.Job) bool, fn func(store.Job) error) error {
	s.mu.RLock()
	all := make([]store.Job, 0, len(s.d.jobs))
	for _, j := range s.d.jobs {
		if keep(j) {
			all = append(all, j)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b store.Job) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, j := range all {
		if err := fn(j); err != nil {
			return err
		}
	}
	return nil
}

// Job returns one job.
func (s *Store) Job(ctx context.Context, id string) (store.Job, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.d.jobs[id]
	if !ok {
		return store.Job{}, store.ErrNotFound
	}
	return j, nil
}

// EndedTokens calls fn for the ended jobs' clientTokens, in EndedAt order.
func (s *Store) EndedTokens(ctx context.Context, fn func(store.EndedToken) error) error {
	s.mu.RLock()
	var out []store.EndedToken
	for _, j := range s.d.jobs {
		if j.ClientToken != "" && j.EndedAt > 0 {
			out = append(out, store.EndedToken{Token: j.ClientToken, ID: j.ID, EndedAt: j.EndedAt})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.EndedToken) int {
		return cmp.Or(cmp.Compare(a.EndedAt, b.EndedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, t := range out {
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// CountJobs counts the jobs of each status.
func (s *Store) CountJobs(ctx context.Context) (map[string]int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{}
	for _, j := range s.d.jobs {
		out[j.Status]++
	}
	return out, nil
}

// ListJobs filters and sorts every job: the simulator never lists, so a
// scan is enough.
func (s *Store) ListJobs(ctx context.Context, f store.JobFilter) ([]store.Job, string, error) {
	after, hasAfter, err := parseCursor(f.After)
	if err != nil {
		return nil, "", err
	}
	s.mu.RLock()
	var match []store.Job
	for _, j := range s.d.jobs {
		if matches(j, f) && (!hasAfter || newer(after, j)) {
			match = append(match, j)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(match, func(a, b store.Job) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	limit := pageLimit(f.Limit)
	if len(match) <= limit {
		return match, "", nil
	}
	page := match[:limit]
	return page, cursor(page[limit-1]), nil
}

func pageLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}

// pos is a place in the newest-first order.
type pos struct {
	created int64
	id      string
}

// newer tells whether j comes after p in the newest-first order.
func newer(p pos, j store.Job) bool {
	return j.CreatedAt < p.created || j.CreatedAt == p.created && j.ID < p.id
}

func cursor(j store.Job) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(j.CreatedAt, 10) + "/" + j.ID))
}

func parseCursor(c string) (pos, bool, error) {
	if c == "" {
		return pos{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return pos{}, false, fmt.Errorf("%w: %v", store.ErrInvalidCursor, err)
	}
	ts, id, ok := strings.Cut(string(raw), "/")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return pos{}, false, store.ErrInvalidCursor
	}
	return pos{created: n, id: id}, true, nil
}

func matches(j store.Job, f store.JobFilter) bool {
	switch {
	case f.Queue != "" && j.Queue != f.Queue,
		f.Share != "" && j.Share != f.Share,
		len(f.Statuses) > 0 && !slices.Contains(f.Statuses, j.Status),
		f.CreatedAfter != 0 && j.CreatedAt <= f.CreatedAfter,
		f.CreatedBefore != 0 && j.CreatedAt >= f.CreatedBefore:
		return false
	}
	name, want := strings.ToLower(j.Name), strings.ToLower(f.NamePrefix)
	if f.NameExact {
		return name == want
	}
	return strings.HasPrefix(name, want)
}

// Meta returns a stored meta value.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.d.meta[key], nil
}

// PurgeEnded deletes jobs that ended before the given time.
func (s *Store) PurgeEnded(ctx context.Context, before int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for len(s.d.ended) > 0 && s.d.ended[0].at < before {
		m := heap.Pop(&s.d.ended).(endMark)
		if j, ok := s.d.jobs[m.id]; ok && j.EndedAt == m.at {
			delete(s.d.jobs, m.id)
			n++
		}
	}
	return n, nil
}

// Close makes later commits fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
