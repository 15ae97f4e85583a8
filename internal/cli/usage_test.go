package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// usageHistory is what an earlier server wrote: QS1's own instances and
// what it borrowed (from QS2, preempted; and spare), QS3's attempt still
// open when that server stopped (the new one closes it at its first cycle,
// t0, its job being gone), a FIFO queue's unsigned job, and a segment
// older than the reports' period.
func usageHistory(st *sqlite.Store) error {
	at := func(d time.Duration) int64 { return t0.Add(-d).UnixMilli() }
	h := time.Hour
	segs := []store.UsageSegment{
		{Attempt: "a1", Job: "j1", Queue: "research", Share: "QS1", Owner: "arn:aws:iam::000000000000:user/alice", Kind: "own", Instances: 2, GPUs: 8, Start: at(72 * h), Stop: at(48 * h)},
		{Attempt: "a2", Job: "j2", Queue: "research", Share: "QS1", Owner: "arn:aws:iam::000000000000:user/bob", Kind: "borrowed", Peer: "QS2", Instances: 1, GPUs: 4, Start: at(50 * h), Stop: at(26 * h)},
		{Attempt: "a3", Job: "j3", Queue: "research", Share: "QS1", Owner: "arn:aws:iam::000000000000:user/alice", Kind: "own", Instances: 1, GPUs: 4, Start: at(h), Stop: at(30 * time.Minute)},
		{Attempt: "a3", Seq: 1, Job: "j3", Queue: "research", Share: "QS1", Owner: "arn:aws:iam::000000000000:user/alice", Kind: "borrowed", Instances: 1, GPUs: 4, Start: at(h), Stop: at(30*time.Minute - 1500*time.Millisecond)},
		{Attempt: "a4", Job: "j4", Queue: "research", Share: "QS3", Owner: "arn:aws:iam::000000000000:user/carol", Kind: "own", Instances: 1, GPUs: 1, Start: at(2 * h)},
		{Attempt: "a5", Job: "j5", Queue: "fifo", Kind: "own", Instances: 4, Start: at(5 * h), Stop: at(4 * h)},
		{Attempt: "a6", Job: "j6", Queue: "research", Share: "QS1", Owner: "arn:aws:iam::000000000000:user/alice", Kind: "own", Instances: 8, GPUs: 64, Start: at(40 * 24 * h), Stop: at(39 * 24 * h)},
	}
	return st.Commit(context.Background(), &store.Batch{Usage: segs, PreemptedAttempts: []string{"a2"}})
}

func TestUsageGolden(t *testing.T) {
	s := startSeededServer(t, false, nil, func(st *sqlite.Store) {
		if err := usageHistory(st); err != nil {
			t.Fatal(err)
		}
	})
	golden(t, "usage", s.ok(Usage))
	golden(t, "usage_owner_csv", s.ok(Usage, "--by", "owner", "-o", "csv"))
	golden(t, "usage_owner", s.ok(Usage, "--by", "owner"))
	golden(t, "usage_queue_every", s.ok(Usage, "--by", "queue", "--since", "3d", "--every", "1d"))
	golden(t, "usage_json", s.ok(Usage, "--since", "90m", "-o", "json"))
	golden(t, "usage_share_id", s.ok(Usage, "--since", "10m", "--by", "share-id", "--every", "4m"))
	golden(t, "usage_none", newServer(t, false).ok(Usage))
}

func TestUsageRefusals(t *testing.T) {
	s := newServer(t, false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "team"}, `--by must be share, share-id, owner or queue, not "team"`},
		{[]string{"--since", "a month"}, `--since must be a duration such as 30d, 2w or 12h, not "a month"`},
		{[]string{"--every", "0s"}, `--every must be a duration such as 30d, 2w or 12h, not "0s"`},
		{[]string{"-o", "yaml"}, `-o must be table, csv or json, not "yaml"`},
		{[]string{"--since", "400d", "--every", "1m"}, "10000 buckets at most"},
	} {
		r := s.run(Usage, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("usage %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
