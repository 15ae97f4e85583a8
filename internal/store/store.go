// Package store is sharq's durable record: the Store interface, a
// conformance suite every backend passes (storetest), and the backends
// (sqlite: embedded default; postgres: shared by several replicas).
package store

import (
	"context"
	"errors"
)

// ErrNotFound is returned when a job or resource does not exist.
var ErrNotFound = errors.New("not found")

// ErrFenced is returned by a Commit of a server that no longer holds the
// leadership its writes carry: another server took it over, and nothing
// of the batch was written.
var ErrFenced = errors.New("leadership lost: another server leads")

// ErrInvalidCursor is returned by ListJobs when After is not a cursor a
// previous ListJobs returned, so the API can answer with a client error.
var ErrInvalidCursor = errors.New("invalid cursor")

// Resource is a configuration object: a scheduling policy, service
// environment, job queue or quota share. Doc is the engine's JSON encoding.
type Resource struct {
	Kind string // "scheduling-policy", "service-environment", "job-queue", "quota-share"
	ARN  string // unique key
	Doc  []byte
}

// Job is a service job's durable record. The indexed fields serve listing;
// Doc is the engine's JSON encoding of the whole job.
type Job struct {
	ID        string
	Name      string
	Queue     string // job queue ARN
	Share     string // quota share name, or a fair-share job's share identifier; empty when none
	Status    string // SUBMITTED, RUNNABLE, ..., SUCCEEDED, FAILED
	CreatedAt int64  // epoch milliseconds
	// EndedAt is when the job reached SUCCEEDED or FAILED (epoch ms), 0
	// while it lives; retention purges by it.
	EndedAt int64
	// ClientToken is the idempotency token it was submitted with, if any.
	ClientToken string
	Doc         []byte
}

// EndedToken is the clientToken of an ended job.
type EndedToken struct {
	Token, ID string
	EndedAt   int64
}

// Batch is what one scheduling cycle changed. It is written atomically:
// all of it or, when Commit fails, none of it. Within a batch the later of
// two entries with the same key wins, and DeletedResources apply after
// Resources, so an ARN in both ends deleted. Empty IDs, ARNs and Meta keys
// are rejected.
type Batch struct {
	Resources        []Resource // upserted by ARN
	DeletedResources []string   // ARNs; deleting an absent one is not an error
	Jobs             []Job      // upserted by ID
	// Meta holds small named values the engine keeps (counters, versions).
	Meta map[string]string
	// Usage upserts segments by (Attempt, Seq); PreemptedAttempts then
	// marks every segment of those attempts Preempted. A store that is no
	// UsageStore ignores both.
	Usage             []UsageSegment
	PreemptedAttempts []string
}

// JobFilter selects jobs for ListJobs. Empty fields match everything.
type JobFilter struct {
	Queue    string
	Share    string
	Statuses []string
	// NamePrefix matches Name case-insensitively (both sides through
	// strings.ToLower); NameExact requires equality instead (still
	// case-insensitive). An empty NamePrefix matches every name.
	NamePrefix string
	NameExact  bool
	// CreatedAfter/CreatedBefore bound CreatedAt (epoch ms, exclusive);
	// 0 means unbounded.
	CreatedAfter  int64
	CreatedBefore int64
	// Limit caps the page (1..1000): 0 or less means 100, more than 1000
	// means 1000. After is the cursor ListJobs returned for the previous
	// page, with the same filter; "" starts at the newest job.
	Limit int
	After string
}

// Store is the durable record. Implementations are safe for concurrent use.
type Store interface {
	// Commit writes the batch atomically and durably (synced) before it
	// returns. Concurrent commits may share one transaction and one sync
	// (group commit); each returns only once its own batch is durable, and
	// one failing batch does not fail the others. On error nothing of b was
	// written; a ctx already done fails with its error.
	Commit(ctx context.Context, b *Batch) error
	// Resources returns every resource, ordered by ARN.
	Resources(ctx context.Context) ([]Resource, error)
	// Jobs calls fn for every stored job, in CreatedAt then ID order,
	// stopping at fn's first error, which it returns.
	Jobs(ctx context.Context, fn func(Job) error) error
	// LiveJobs is Jobs for the jobs that have not ended (EndedAt 0): what
	// the engine loads on start.
	LiveJobs(ctx context.Context, fn func(Job) error) error
	// Job returns one job, or ErrNotFound.
	Job(ctx context.Context, id string) (Job, error)
	// EndedTokens calls fn for every ended job submitted with a clientToken,
	// in EndedAt order: what the engine keeps of the ended jobs it does not
	// load, to answer a retried submission.
	EndedTokens(ctx context.Context, fn func(EndedToken) error) error
	// CountJobs returns how many jobs there are of each status.
	CountJobs(ctx context.Context) (map[string]int, error)
	// ListJobs returns jobs matching f newest first (CreatedAt desc, then ID
	// desc) and the cursor of the next page ("" when none). Paging visits
	// every matching job once, even when equal CreatedAt values straddle a
	// page boundary. A malformed f.After gives ErrInvalidCursor.
	ListJobs(ctx context.Context, f JobFilter) ([]Job, string, error)
	// Meta returns a value stored through Batch.Meta, or "" when unset.
	Meta(ctx context.Context, key string) (string, error)
	// PurgeEnded deletes jobs that ended before the given time (epoch ms,
	// EndedAt > 0 && EndedAt < before) and returns how many went.
	PurgeEnded(ctx context.Context, before int64) (int, error)
	// Close waits for commits in flight and releases the store; Commit
	// fails afterwards. Calling Close again does nothing.
	Close() error
}

// UsageSegment is capacity one attempt held of one kind, without change,
// over [Start, Stop) (epoch ms; Stop is 0 while the attempt still holds
// it). An attempt's segments, one after another, cover it from its
// dispatch until the capacity is released; a change of whose capacity it
// holds (own, or borrowed from a share) closes them and opens new ones.
type UsageSegment struct {
	Attempt string // the attempt's ID: with Seq, the key
	Seq     int
	Job     string
	Queue   string // job queue name
	Share   string // quota share name, empty in a FIFO queue
	ShareID string // the job's shareIdentifier, if any
	Owner   string // who submitted the job, empty when unsigned
	Kind    string // "own" or "borrowed"
	// Peer is the lending share of borrowed capacity; empty for the
	// service environment's capacity beyond all share limits.
	Peer        string
	Instances   int
	GPUs        int // all instances' GPUs together
	Start, Stop int64
	// Preempted marks the segments of an attempt that was preempted.
	Preempted bool
}

// UsageStore keeps usage segments: a Batch's Usage and PreemptedAttempts
// are written by the stores that implement it and ignored by others.
type UsageStore interface {
	// Usage calls fn for every segment overlapping [from, to): Start < to
	// and (Stop == 0 or Stop > from), in Start, Attempt, Seq order.
	Usage(ctx context.Context, from, to int64, fn func(UsageSegment) error) error
	// OpenUsage calls fn for every segment with Stop 0, in Start, Attempt,
	// Seq order: what the engine resumes on start.
	OpenUsage(ctx context.Context, fn func(UsageSegment) error) error
	// PurgeUsage deletes the segments with 0 < Stop < before (epoch ms)
	// and returns how many went.
	PurgeUsage(ctx context.Context, before int64) (int, error)
}
