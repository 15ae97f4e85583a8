package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/groupcommit"
)

// ErrClosed is returned by Commit after Close.
var ErrClosed = errors.New("store closed")

// Store is store.Store on a PostgreSQL database. It is safe for
// concurrent use.
type Store struct {
	opts options
	pool *pgxpool.Pool

	commits *groupcommit.Queue

	// fence, once the store has taken the lease, is what every write
	// checks in the database: that the lease is still its own.
	fence atomic.Pointer[Lease]

	batches, txs atomic.Int64
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	maxConns int32
	maxGroup int
	logger   *slog.Logger
}

// WithMaxConns caps the connections to the database (default 8): one
// writes, the others serve reads and the lease.
func WithMaxConns(n int) Option { return func(o *options) { o.maxConns = int32(max(n, 2)) } }

// WithMaxGroup caps how many Commit batches share one transaction
// (default 1024).
func WithMaxGroup(n int) Option { return func(o *options) { o.maxGroup = max(n, 1) } }

// WithLogger sets where the lease's changes are reported; by default they
// are discarded.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// Open connects to the database the URL names (postgres://user@host/db),
// brings its schema up to date and starts the write loop.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	o := options{maxConns: 8, maxGroup: 1024, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	cfg.MaxConns = o.maxConns
	// A leader paused (or cut off) inside a commit holds a lock on the
	// lease row, and a takeover waits for it: the database ends such a
	// transaction, and its lock, once it has been idle this long. No
	// transaction of a live server is idle for more than a round trip.
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "3000"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{opts: o, pool: pool}
	s.commits = groupcommit.Start(groupcommit.Config{
		MaxGroup: o.maxGroup, Write: s.writeTx, Alone: writeAlone, Closed: ErrClosed,
	})
	return s, nil
}

// Close waits for queued commits to be written, then closes the
// connections. It does not give up a lease: Resign does. Calling it again
// does nothing.
func (s *Store) Close() error {
	s.commits.Close()
	s.pool.Close()
	return nil
}

// Stats counts the write path's work since Open. Batches/Transactions is
// the mean group size.
type Stats struct {
	Batches      int64
	Transactions int64
}

// Stats returns the write counters.
func (s *Store) Stats() Stats {
	return Stats{Batches: s.batches.Load(), Transactions: s.txs.Load()}
}
