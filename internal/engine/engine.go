// Package engine is the shell around the scheduling core: the single writer
// that applies API writes and executor reports to the core, runs its cycles,
// commits each cycle's changes to the store before answering or acting, and
// dispatches attempts to the executor. It keeps the AWS Batch records in
// memory and in the store (the resources as the resource model, batchmodel,
// decides them; the service jobs itself), and rebuilds the core from the
// store when it starts.
package engine

import (
	"errors"
	"log/slog"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/store"
)

// Clock tells the engine the time; the simulator replaces it.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Options configures an engine.
type Options struct {
	Region    string // default us-east-1
	AccountID string // default 000000000000
	Partition string // default aws

	Store    store.Store
	Executor executor.Executor
	Clock    Clock // default the wall clock; a driven engine's is Driver.Clock
	Logger   *slog.Logger

	// MaxSharesPerQueue caps quota shares per job queue (AWS: 20).
	MaxSharesPerQueue int
	// MaxCapacityLimits caps capacity limits per share and per service
	// environment (AWS: 5).
	MaxCapacityLimits int
	// Retention keeps ended jobs this long (default 7 days).
	Retention time.Duration
	// UsageRetention keeps usage history this long (default
	// DefaultUsageRetention; negative keeps it forever).
	UsageRetention time.Duration
	// Driver, when not nil, makes the caller drive the engine instead of
	// Run, on its clock, and may give a sink that takes the cycles' bare
	// transitions instead of job records and events (the simulator).
	Driver *Driver
	// Observers hear what each committed cycle did (metrics).
	Observers []jobevents.Observer
	// NewID makes job IDs (default: random UUIDs). The simulator makes them
	// deterministic.
	NewID func() string
	// StopGrace is how long a stopped attempt may take to exit before it is
	// killed (default 120 s, as SageMaker's StopTrainingJob gives).
	StopGrace time.Duration
	// StopTimeout is how much longer than StopGrace a preemptor waits for
	// its victims to report that they stopped before it starts anyway
	// (default 30 s).
	StopTimeout time.Duration
	// ExecutorWorkers is how many executor calls are made at once (default
	// 16).
	ExecutorWorkers int
	// StartTries is how many times a start failing with a transient error
	// is tried before the attempt fails (default 5); RetryBackoff is the
	// delay before the first retry, doubling after each (default 100 ms).
	StartTries   int
	RetryBackoff time.Duration
	// EstimateHorizon is how far ahead start estimates look (default
	// DefaultEstimateHorizon); a job not started within it is "not within"
	// it.
	EstimateHorizon time.Duration
	// EstimateMaxDecisions bounds the work of one estimate: the forward run
	// of the core stops after that many decisions (default
	// DefaultEstimateMaxDecisions).
	EstimateMaxDecisions int
	// Lease, for a server that shares its store with others, is the
	// leadership it acts under: Run stops when the lease ends, attempts
	// carry its term, and no executor call is made once it is not held.
	// Nil for a server alone on its store.
	Lease Lease
}

// Lease is a hold on the leadership of servers sharing one store.
type Lease interface {
	// Term grows by one at every change of leader.
	Term() int64
	// Held tells whether the lease is held now, by this server's clock,
	// with a margin: false once it may have passed to another server.
	Held() bool
	// Done is closed when the lease has ended.
	Done() <-chan struct{}
}

// ErrLeaseLost is Run's error when the engine's lease ended: another
// server may lead now, and this one must not act.
var ErrLeaseLost = errors.New("the leadership lease ended")

func (o *Options) setDefaults() {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.AccountID == "" {
		o.AccountID = "000000000000"
	}
	if o.Partition == "" {
		o.Partition = "aws"
	}
	if o.Driver != nil && o.Driver.Clock != nil {
		o.Clock = o.Driver.Clock
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxSharesPerQueue == 0 {
		o.MaxSharesPerQueue = 20
	}
	if o.MaxCapacityLimits == 0 {
		o.MaxCapacityLimits = 5
	}
	if o.Retention == 0 {
		o.Retention = 7 * 24 * time.Hour
	}
	if o.UsageRetention == 0 {
		o.UsageRetention = DefaultUsageRetention
	}
	if o.NewID == nil {
		o.NewID = newUUID
	}
	if o.StopGrace == 0 {
		o.StopGrace = 120 * time.Second
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 30 * time.Second
	}
	if o.ExecutorWorkers <= 0 {
		o.ExecutorWorkers = 16
	}
	if o.StartTries <= 0 {
		o.StartTries = 5
	}
	if o.EstimateHorizon <= 0 {
		o.EstimateHorizon = DefaultEstimateHorizon
	}
	if o.EstimateMaxDecisions <= 0 {
		o.EstimateMaxDecisions = DefaultEstimateMaxDecisions
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 100 * time.Millisecond
	}
}
