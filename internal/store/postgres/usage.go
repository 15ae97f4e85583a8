package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sharq-dev/sharq/internal/store"
)

const (
	// The segments of a group go in one statement, as arrays; the later
	// of two with the same key wins before they reach it.
	upsertUsageSQL = `INSERT INTO usage (` + store.UsageColumns + `)
		SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::text[], $9::text[], $10::int[], $11::int[], $12::bigint[], $13::bigint[], $14::boolean[])
		ON CONFLICT (attempt, seq) DO UPDATE SET job = excluded.job, queue = excluded.queue, share = excluded.share,
			share_id = excluded.share_id, owner = excluded.owner, kind = excluded.kind, peer = excluded.peer,
			instances = excluded.instances, gpus = excluded.gpus, start_at = excluded.start_at,
			stop_at = excluded.stop_at, preempted = excluded.preempted OR usage.preempted`
	markPreemptedSQL = `UPDATE usage SET preempted = true WHERE attempt = ANY($1::text[])`
)

type usageKey struct {
	attempt string
	seq     int
}

// queueUsage queues a group's usage segments, then its preempted marks.
func queueUsage(b *pgx.Batch, segs map[usageKey]store.UsageSegment, preempted []string) {
	if n := len(segs); n > 0 {
		var (
			attempts, jobs, queues, shares, ids, owners, kinds, peers []string
			seqs, instances, gpus                                     []int32
			starts, stops                                             []int64
			pre                                                       []bool
		)
		for _, u := range segs {
			attempts, seqs, jobs, queues = append(attempts, u.Attempt), append(seqs, int32(u.Seq)), append(jobs, u.Job), append(queues, u.Queue)
			shares, ids, owners, kinds, peers = append(shares, u.Share), append(ids, u.ShareID), append(owners, u.Owner), append(kinds, u.Kind), append(peers, u.Peer)
			instances, gpus, starts, stops, pre = append(instances, int32(u.Instances)), append(gpus, int32(u.GPUs)), append(starts, u.Start), append(stops, u.Stop), append(pre, u.Preempted)
		}
		b.Queue(upsertUsageSQL, attempts, seqs, jobs, queues, shares, ids, owners, kinds, peers, instances, gpus, starts, stops, pre)
	}
	if len(preempted) > 0 {
		b.Queue(markPreemptedSQL, preempted)
	}
}

// Usage calls fn for every usage segment overlapping [from, to).
func (s *Store) Usage(ctx context.Context, from, to int64, fn func(store.UsageSegment) error) error {
	return s.streamUsage(ctx, `SELECT `+store.UsageColumns+` FROM usage
		WHERE start_at < $1 AND (stop_at = 0 OR stop_at > $2) ORDER BY start_at, attempt, seq`, fn, to, from)
}

// OpenUsage calls fn for every usage segment still open.
func (s *Store) OpenUsage(ctx context.Context, fn func(store.UsageSegment) error) error {
	return s.streamUsage(ctx, `SELECT `+store.UsageColumns+` FROM usage WHERE stop_at = 0 ORDER BY start_at, attempt, seq`, fn)
}

func (s *Store) streamUsage(ctx context.Context, query string, fn func(store.UsageSegment) error, args ...any) error {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	return store.StreamUsage(rows, fn)
}

// PurgeUsage deletes closed usage segments with Stop < before, in chunks.
func (s *Store) PurgeUsage(ctx context.Context, before int64) (int, error) {
	const del = `DELETE FROM usage WHERE (attempt, seq) IN (
		SELECT attempt, seq FROM usage WHERE stop_at > 0 AND stop_at < $1 LIMIT $2)`
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, del, before, purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge usage: %w", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < purgeChunk {
			return total, nil
		}
	}
}
