package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// seedInfo describes a seeded store; seed writes it next to the database
// as seed.json and restart reads it.
type seedInfo struct {
	Jobs     int      `json:"jobs"`
	Ended    int      `json:"ended"`
	Runnable int      `json:"runnable"`
	Running  int      `json:"running"`
	Sample   []string `json:"sampleJobIds"`
}

const seedInfoFile = "seed.json"

// The seeded cluster: the "done" queue has room for everything, so its
// jobs run and end at once; the "wait" queue's shares are each filled to
// their limit by jobs that run for a day, so its other jobs wait RUNNABLE
// and nothing is lent, borrowed or preempted.
const (
	seedDone          = "seed-done"
	seedWait          = "seed-wait"
	seedWaitShares    = 6
	seedShareCapacity = 20
	seedInstance      = "ml.m5.large"
)

// seedPlan says what becomes of each seeded job.
type seedPlan struct {
	jobs         int
	runnableFrac float64
	failedFrac   float64
}

type seedKind int

const (
	seedSucceeded seedKind = iota
	seedFailed
	seedRunnable
)

// kind draws job i's kind from a fixed hash of i, so the kinds mix
// through the store and a run seeds the same store every time.
func (p seedPlan) kind(i int) seedKind {
	u := float64(splitmix(uint64(i)^0x5eed)>>11) / (1 << 53)
	switch {
	case u < p.runnableFrac:
		return seedRunnable
	case u < p.runnableFrac+p.failedFrac:
		return seedFailed
	}
	return seedSucceeded
}

// seedID is job i's ID: a version 7 UUID, as the engine makes, whose
// time is a fixed base plus i milliseconds and whose random bits are a
// fixed hash of i, so a run seeds the same store every time.
func seedID(i int) string {
	var b [16]byte
	ms := uint64(1_750_000_000_000 + i)
	for k := range 6 {
		b[k] = byte(ms >> (40 - 8*k))
	}
	h, l := splitmix(uint64(i)), splitmix(uint64(i)^0x9e37)
	for k := 6; k < 16; k++ {
		b[k] = byte(h >> (8 * (k % 8)))
		if k >= 8 {
			b[k] = byte(l >> (8 * (k - 8)))
		}
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// fakeClock is the seeding engine's clock; the seeder moves it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// recorder is an executor that only records the attempts it is asked to
// start; the seeder reports their progress itself.
type recorder struct{ started []executor.Attempt }

func (r *recorder) Start(_ context.Context, a executor.Attempt) error {
	r.started = append(r.started, a)
	return nil
}
func (r *recorder) Stop(context.Context, string, time.Duration) error   { return nil }
func (r *recorder) Updates() <-chan executor.Update                     { return nil }
func (r *recorder) Attempts(context.Context) ([]executor.Update, error) { return nil, nil }
func (r *recorder) Close() error                                        { return nil }

// capture is the seeding engine's store: it keeps the latest version of
// each record the engine commits and hands them to a SQLite store in large
// batches, written by another goroutine while the engine goes on. It
// forgets nothing the engine purges: the engine purges ended jobs from its
// memory (the seeder keeps its retention short for that), not from the
// store.
type capture struct {
	pending  map[string]store.Job
	order    []string
	res      []store.Resource
	flushAt  int
	out      chan *store.Batch
	done     chan error
	written  int
	writeErr error
}

func newCapture(st store.Store, flushAt int) *capture {
	c := &capture{pending: map[string]store.Job{}, flushAt: flushAt, out: make(chan *store.Batch, 2), done: make(chan error, 1)}
	go func() {
		var err error
		for b := range c.out {
			if err == nil {
				err = st.Commit(context.Background(), b)
			}
		}
		c.done <- err
	}()
	return c
}

func (c *capture) Commit(_ context.Context, b *store.Batch) error {
	if len(b.DeletedResources) > 0 {
		return errors.New("seed: the seeding engine deletes no resources")
	}
	c.res = append(c.res, b.Resources...)
	for _, j := range b.Jobs {
		if _, ok := c.pending[j.ID]; !ok {
			c.order = append(c.order, j.ID)
		}
		c.pending[j.ID] = j
	}
	if len(c.pending) >= c.flushAt {
		c.flush()
	}
	return nil
}

func (c *capture) flush() {
	b := &store.Batch{Resources: c.res, Jobs: make([]store.Job, 0, len(c.order))}
	for _, id := range c.order {
		b.Jobs = append(b.Jobs, c.pending[id])
	}
	c.written += len(b.Jobs)
	c.out <- b
	c.res, c.order = nil, nil
	c.pending = make(map[string]store.Job, c.flushAt)
}

// finish writes what is left and waits for the writer.
func (c *capture) finish() error {
	c.flush()
	close(c.out)
	return <-c.done
}

func (c *capture) Resources(context.Context) ([]store.Resource, error) { return nil, nil }
func (c *capture) Jobs(context.Context, func(store.Job) error) error   { return nil }
func (c *capture) LiveJobs(context.Context, func(store.Job) error) error {
	return nil
}
func (c *capture) EndedTokens(context.Context, func(store.EndedToken) error) error { return nil }
func (c *capture) CountJobs(context.Context) (map[string]int, error)               { return nil, nil }
func (c *capture) Job(context.Context, string) (store.Job, error) {
	return store.Job{}, store.ErrNotFound
}
func (c *capture) Meta(context.Context, string) (string, error)   { return "", nil }
func (c *capture) PurgeEnded(context.Context, int64) (int, error) { return 0, nil }
func (c *capture) Close() error                                   { return nil }
func (c *capture) ListJobs(context.Context, store.JobFilter) ([]store.Job, string, error) {
	return nil, "", nil
}

// seed writes a store of p.jobs jobs into dir (or the PostgreSQL store at
// storeURL) through a driven engine, so every record is what the
// engine itself would have written.
func seed(ctx context.Context, dir, storeURL string, p seedPlan, progress io.Writer) (seedInfo, error) {
	st, err := openSeedStore(ctx, dir, storeURL)
	if err != nil {
		return seedInfo{}, err
	}
	defer st.Close()
	cap := newCapture(st, 20000)
	clock := &fakeClock{now: time.Now().Add(-time.Duration(p.jobs+200_000) * time.Millisecond).Truncate(time.Millisecond)}
	rec := &recorder{}
	next := 0
	eng, err := engine.New(ctx, engine.Options{
		Store: cap, Executor: rec, Driver: &engine.Driver{Clock: clock}, Retention: time.Millisecond,
		NewID: func() string { id := seedID(next); next++; return id },
	})
	if err != nil {
		return seedInfo{}, err
	}
	if err := seedCluster(ctx, eng); err != nil {
		return seedInfo{}, err
	}
	info := seedInfo{Jobs: p.jobs}
	prio := 10
	submit := func(queue, share string, runtimeMs int, i int) error {
		spec := jobSpec{Name: fmt.Sprintf("seed-%d", i), InstanceType: seedInstance, Instances: 1, RuntimeMs: runtimeMs}
		_, err := eng.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{
			JobName: spec.Name, JobQueue: queue, ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: spec.payload(),
			ClientToken: fmt.Sprintf("seed-token-%d", i), QuotaShareName: share, SchedulingPriority: &prio,
		})
		return err
	}
	// Fill each wait share to its limit with jobs that run for a day.
	for s := range seedWaitShares {
		for range seedShareCapacity {
			if err := submit(seedWait, fmt.Sprintf("w%d", s), 24*3600*1000, next); err != nil {
				return info, err
			}
			info.Running++
		}
	}
	if err := deliver(ctx, eng, rec, clock.now, executor.Running); err != nil {
		return info, err
	}
	lastTick := clock.now
	start := time.Now()
	for i := info.Running; i < p.jobs; i++ {
		if i%50000 == 0 && ctx.Err() != nil {
			return info, ctx.Err()
		}
		clock.now = clock.now.Add(time.Millisecond)
		switch p.kind(i) {
		case seedRunnable:
			if err := submit(seedWait, fmt.Sprintf("w%d", i%seedWaitShares), 60_000, i); err != nil {
				return info, err
			}
			info.Runnable++
			continue
		case seedFailed:
			if err := submit(seedDone, fmt.Sprintf("d%d", i%4), 60_000, i); err != nil {
				return info, err
			}
			if err := deliver(ctx, eng, rec, clock.now, executor.Running, executor.Failed); err != nil {
				return info, err
			}
		default:
			if err := submit(seedDone, fmt.Sprintf("d%d", i%4), 60_000, i); err != nil {
				return info, err
			}
			if err := deliver(ctx, eng, rec, clock.now, executor.Running, executor.Succeeded); err != nil {
				return info, err
			}
		}
		info.Ended++
		// Let the engine forget ended jobs now and then, as it would a
		// week after they ended, so its memory stays small.
		if clock.now.Sub(lastTick) > time.Minute {
			clock.now = clock.now.Add(time.Minute)
			lastTick = clock.now
			if err := eng.Tick(ctx); err != nil {
				return info, err
			}
			if progress != nil {
				fmt.Fprintf(progress, "seeded %d of %d jobs (%.0f/s)\n", i+1, p.jobs, float64(i+1)/time.Since(start).Seconds())
			}
		}
	}
	if err := cap.finish(); err != nil {
		return info, err
	}
	if next != p.jobs {
		return info, fmt.Errorf("seed: the engine made %d job IDs for %d jobs", next, p.jobs)
	}
	for i := 0; i < p.jobs; i += max(1, p.jobs/1000) {
		info.Sample = append(info.Sample, seedID(i))
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return info, err
	}
	return info, os.WriteFile(filepath.Join(dir, seedInfoFile), b, 0o644)
}

// deliver reports the given states, in order and a minute apart, for
// every attempt started since the last call, and forgets those attempts.
func deliver(ctx context.Context, eng *engine.Engine, rec *recorder, at time.Time, states ...executor.State) error {
	for _, a := range rec.started {
		for k, s := range states {
			u := executor.Update{AttemptID: a.ID, JobID: a.JobID, State: s, At: at.Add(time.Duration(k) * time.Minute)}
			if s == executor.Failed {
				u.Reason, u.ExitCode = "exit code 1", 1
			}
			if err := eng.Deliver(ctx, u); err != nil {
				return err
			}
		}
	}
	rec.started = rec.started[:0]
	return nil
}

func seedCluster(ctx context.Context, eng *engine.Engine) error {
	pol, err := eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{
		Name: "seed", QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	if err != nil {
		return err
	}
	borrow := 500
	for _, q := range []struct {
		name, prefix   string
		shares, shareN int
	}{{seedDone, "d", 4, 250_000}, {seedWait, "w", seedWaitShares, seedShareCapacity}} {
		if _, err := eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{
			Name: q.name + "-se", Type: "SAGEMAKER_TRAINING",
			CapacityLimits: []record.CapacityLimit{{CapacityUnit: seedInstance, MaxCapacity: q.shares * q.shareN}}}); err != nil {
			return err
		}
		if _, err := eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{
			Name: q.name, Priority: 1, Type: "SAGEMAKER_TRAINING", SchedulingPolicyArn: pol.Arn,
			ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: q.name + "-se"}}}); err != nil {
			return err
		}
		for s := range q.shares {
			if _, err := eng.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{
				Name: fmt.Sprintf("%s%d", q.prefix, s), JobQueue: q.name,
				CapacityLimits:               []record.CapacityLimit{{CapacityUnit: seedInstance, MaxCapacity: q.shareN}},
				ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: &borrow},
				PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"},
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

func runSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", "", "data directory to seed (its sharq.db must not exist yet)")
	jobs := fs.Int("jobs", 1_000_000, "jobs to write")
	storeURL := fs.String("store", "", "a postgres:// URL to seed instead of -data-dir's SQLite file (its schema must hold no jobs yet)")
	runnable := fs.Float64("runnable", 0.1, "fraction of the jobs left RUNNABLE (waiting for capacity)")
	failed := fs.Float64("failed", 0.02, "fraction of the jobs that end FAILED; the others SUCCEEDED")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "seed: -data-dir is required")
		return errUsage
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	info, err := seed(ctx, *dir, *storeURL, seedPlan{jobs: *jobs, runnableFrac: *runnable, failedFrac: *failed}, stderr)
	if err != nil {
		return err
	}
	size := int64(0)
	for _, f := range []string{"sharq.db", "sharq.db-wal"} {
		if st, err := os.Stat(filepath.Join(*dir, f)); err == nil {
			size += st.Size()
		}
	}
	fmt.Fprintf(stdout, "seeded %d jobs (%d ended, %d RUNNABLE, %d RUNNING) into %s in %v; database %d MiB\n",
		info.Jobs, info.Ended, info.Runnable, info.Running, *dir, time.Since(start).Round(time.Second), size>>20)
	return nil
}

var _ store.Store = (*capture)(nil)

// openSeedStore opens a new SQLite store in dir, or the PostgreSQL store
// at storeURL, which must hold no jobs.
func openSeedStore(ctx context.Context, dir, storeURL string) (store.Store, error) {
	if storeURL != "" {
		st, err := postgres.Open(ctx, storeURL)
		if err != nil {
			return nil, err
		}
		if n, err := st.CountJobs(ctx); err != nil || len(n) > 0 {
			st.Close()
			return nil, fmt.Errorf("seed an empty store (jobs by status: %v, %v)", n, err)
		}
		return st, nil
	}
	path := filepath.Join(dir, "sharq.db")
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s exists: seed an empty data directory", path)
	}
	return sqlite.Open(path)
}
