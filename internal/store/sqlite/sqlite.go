package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/groupcommit"
)

// ErrClosed is returned by Commit after Close.
var ErrClosed = errors.New("store closed")

// Store is store.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	opts    options
	writer  *sql.DB // one connection: SQLite has one writer at a time anyway
	readers *sql.DB // read-only connections
	ckpt    *sql.DB // one connection for background checkpoints
	stmts   *writeStmts

	commits *groupcommit.Queue
	stopped chan struct{} // closed once the write loop has stopped

	kick     chan struct{} // wakes the checkpointer after a commit; closed by Close
	ckptDone chan struct{} // closed when the checkpointer has stopped

	batches, txs, checkpoints atomic.Int64

	// beforeWrite, when set, runs before each group is written; tests use
	// it to hold the writer while commits queue up.
	beforeWrite func()

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	readers     int
	busyTimeout time.Duration
	maxGroup    int
	logger      *slog.Logger
}

// WithReaders sets how many read connections may be open at once
// (default: the number of CPUs, at least 4). Each concurrent Jobs, ListJobs
// or Job call holds one while it runs.
func WithReaders(n int) Option { return func(o *options) { o.readers = max(n, 1) } }

// WithBusyTimeout sets how long a connection waits for a lock held by
// another process on the same file before failing (default 5s).
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithMaxGroup caps how many Commit batches share one transaction (default
// 1024). A larger group amortises the sync further but makes its commits
// wait for more rows to be written.
func WithMaxGroup(n int) Option { return func(o *options) { o.maxGroup = max(n, 1) } }

// WithLogger sets where background failures (checkpoints) are reported;
// by default, or given nil, they are discarded. Commit and read errors are
// returned, not logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

func defaultOptions() options {
	return options{
		readers:     max(runtime.NumCPU(), 4),
		busyTimeout: 5 * time.Second,
		maxGroup:    1024,
		logger:      slog.New(slog.DiscardHandler),
	}
}

// Open opens the database file at path, creating it and its parent
// directories if needed, and brings its schema up to date.
func Open(path string, opts ...Option) (*Store, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s, err := openDBs(abs, o)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.commits = groupcommit.Start(groupcommit.Config{MaxGroup: o.maxGroup, Write: s.writeGroup, Closed: ErrClosed})
	go s.checkpointLoop()
	return s, nil
}

// openDBs opens the writer, migrates, then opens the readers and the
// checkpointer: they must not see a schema still being created.
func openDBs(path string, o options) (*Store, error) {
	writer, err := openDB(path, o, writerRole)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := migrate(ctx, writer); err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	stmts, err := prepareWrites(ctx, writer)
	if err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	readers, err := openDB(path, o, readerRole)
	if err != nil {
		return nil, errors.Join(err, stmts.close(), writer.Close())
	}
	ckpt, err := openDB(path, o, checkpointRole)
	if err != nil {
		return nil, errors.Join(err, readers.Close(), stmts.close(), writer.Close())
	}
	return &Store{
		opts:     o,
		writer:   writer,
		readers:  readers,
		ckpt:     ckpt,
		stmts:    stmts,
		stopped:  make(chan struct{}),
		kick:     make(chan struct{}, 1),
		ckptDone: make(chan struct{}),
	}, nil
}

type role int

const (
	writerRole role = iota
	readerRole
	checkpointRole
)

const (
	// mmapSize lets connections read pages from a shared memory mapping
	// instead of a read system call per page, which halves the time to
	// stream every job. It is SQLite's default ceiling (about 2 GiB);
	// pages past it are read the usual way.
	mmapSize = 0x7fff0000
	// walBackstopPages is the WAL size (4 KiB pages) at which the writer
	// checkpoints by itself. The checkpointer normally keeps the WAL well
	// below it; past it, the checkpointer is not keeping up, and a commit
	// pays for a checkpoint so the WAL can start over.
	walBackstopPages = 16384
	// walSizeLimit is what a WAL file is truncated to once it starts over.
	walSizeLimit = 64 << 20
	// writerCacheKiB is the writer's page cache. A transaction whose dirty
	// pages outgrow the cache spills them to the WAL early and may write
	// them twice, so it holds a cycle of 4,096 new jobs (about 10 MiB);
	// SQLite's default is 2 MiB. It is no larger because every commit
	// pays for the cache's size: with 64 MiB, a commit of 30 jobs cost
	// 11 µs more CPU per job than with 16 MiB, for the same CPU on
	// commits of 4,096 (100,000 jobs of 1.8 KB stored).
	writerCacheKiB = 16 << 10
)

// openDB opens a pool on path. Every connection gets the pragmas through
// the DSN, so a connection the pool reopens gets them too.
func openDB(path string, o options, r role) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// NB: FULL, not NORMAL: in WAL mode NORMAL does not sync the WAL at
	// commit, so a power loss could drop acknowledged commits.
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmapSize))
	q.Set("_txlock", "immediate")
	n := 1
	switch r {
	case writerRole:
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages))
		q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -writerCacheKiB))
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	case readerRole:
		q.Add("_pragma", "query_only(1)")
		n = o.readers
	}
	dsn := (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.Ping(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// Close waits for queued commits to be written, then closes the
// connections. Calling it again does nothing.
func (s *Store) Close() error {
	closing := false
	s.closeOnce.Do(func() { closing = true })
	if !closing {
		return nil
	}
	s.commits.Close()
	close(s.stopped)
	close(s.kick)
	<-s.ckptDone

	// PRAGMA optimize keeps the planner's statistics current; SQLite
	// recommends it before closing a long-lived connection.
	_, err := s.writer.Exec(`PRAGMA optimize`)
	err = errors.Join(err, s.stmts.close(), s.ckpt.Close(), s.readers.Close(), s.writer.Close())
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Stats counts the write path's work since Open. Batches/Transactions is
// the mean group size: how many commits shared one sync.
type Stats struct {
	Batches      int64 // Commit batches written
	Transactions int64 // transactions that wrote them
	Checkpoints  int64 // background checkpoints run
}

// Stats returns the write counters.
func (s *Store) Stats() Stats {
	return Stats{Batches: s.batches.Load(), Transactions: s.txs.Load(), Checkpoints: s.checkpoints.Load()}
}
