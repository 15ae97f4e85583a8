package sqlite

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sharq-dev/sharq/internal/store"
)

// benchDoc stands in for the engine's JSON encoding of a job: about 500
// bytes, like a SubmitServiceJob request with its status.
var benchDoc = []byte(`{"jobArn":"arn:aws:batch:us-east-1:000000000000:service-job/` +
	strings.Repeat("0", 36) + `","serviceJobType":"SAGEMAKER_TRAINING","schedulingPriority":10,` +
	`"shareIdentifier":"research","retryStrategy":{"attempts":3},"tags":{"team":"vision"},` +
	`"serviceRequestPayload":"` + strings.Repeat("x", 300) + `"}`)

var (
	benchQueues   = []string{"gpu-a", "gpu-b", "gpu-c", "gpu-d"}
	benchStatuses = []string{"SUBMITTED", "RUNNABLE", "RUNNABLE", "RUNNING", "SUCCEEDED", "SUCCEEDED", "FAILED"}
)

const benchEpoch = 1_767_225_600_000 // 2026-01-01, epoch ms

// benchJob returns the i-th job of a synthetic workload: created in order
// of i, with a random UUID-shaped ID and a random name, so the ID and name
// index inserts land all over their B-trees (the worst case), spread over 4
// queues, 8 shares and the usual statuses.
func benchJob(i int) store.Job {
	h := mix(uint64(i))
	return store.Job{
		ID:        fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(h), uint16(h>>32), uint16(h>>48)&0xfff, i&0xfff, mix(h)>>16),
		Name:      fmt.Sprintf("train-%x", mix(h+1)>>40),
		Queue:     benchQueues[i%len(benchQueues)],
		Share:     fmt.Sprint("share-", i%8),
		Status:    benchStatuses[i%len(benchStatuses)],
		CreatedAt: benchEpoch + int64(i),
		Doc:       benchDoc,
	}
}

// v7Job is benchJob with an ID that starts with its creation time, as a
// UUIDv7 does: ID index inserts land at the end of the B-tree.
func v7Job(i int) store.Job {
	j := benchJob(i)
	j.ID = fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", uint64(j.CreatedAt)>>16, uint16(j.CreatedAt), i&0xfff, i>>12&0xfff, mix(uint64(i))>>16)
	return j
}

// orderedJob is v7Job with a name ending in a timestamp, as the SageMaker
// SDK names jobs: name index inserts land at the end of the B-tree too.
func orderedJob(i int) store.Job {
	j := v7Job(i)
	j.Name = fmt.Sprintf("pytorch-training-%013d", j.CreatedAt)
	return j
}

// mix is splitmix64's finalizer: a fixed, well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// benchStore opens a store in a temporary directory holding jobs 0..n-1
// of gen, committed 10,000 to a batch.
func benchStore(b *testing.B, n int, gen func(int) store.Job) *Store {
	b.Helper()
	s := mustOpen(b, filepath.Join(b.TempDir(), "sharq.db"))
	b.Cleanup(func() { s.Close() })
	const chunk = 10_000
	for lo := 0; lo < n; lo += chunk {
		batch := &store.Batch{}
		for i := lo; i < min(lo+chunk, n); i++ {
			batch.Jobs = append(batch.Jobs, gen(i))
		}
		if err := s.Commit(context.Background(), batch); err != nil {
			b.Fatalf("fill: %v", err)
		}
	}
	return s
}

// BenchmarkCommit measures durable commits of new jobs (as SubmitServiceJob
// makes) into a store that already holds 100,000 jobs: one job per Commit
// from 1, 8 and 64 goroutines, where concurrent commits share a transaction
// and its sync; and one goroutine committing 256 jobs at a time, as the
// engine commits a cycle. Random IDs and names put two random B-tree
// pages per job in the WAL, which is what bounds throughput on a slow
// disk: ids=random uses UUIDv4-shaped IDs and random names, ids=v7
// time-ordered IDs and random names, ids=ordered time-ordered IDs and
// names.
func BenchmarkCommit(b *testing.B) {
	const existing = 100_000
	s := benchStore(b, existing, benchJob)
	var next atomic.Int64
	next.Store(existing)
	cases := []struct {
		ids        string
		gen        func(int) store.Job
		committers int
		jobs       int // per Commit
	}{
		{"random", benchJob, 1, 1},
		{"random", benchJob, 8, 1},
		{"random", benchJob, 64, 1},
		{"random", benchJob, 1, 256},
		{"v7", v7Job, 64, 1},
		{"v7", v7Job, 1, 256},
		{"ordered", orderedJob, 64, 1},
		{"ordered", orderedJob, 1, 256},
	}
	for _, c := range cases {
		name := fmt.Sprintf("ids=%s/committers=%d/jobs=%d", c.ids, c.committers, c.jobs)
		b.Run(name, func(b *testing.B) {
			before := s.Stats()
			var wg sync.WaitGroup
			var commits atomic.Int64
			b.ResetTimer()
			for range c.committers {
				wg.Go(func() {
					for commits.Add(1) <= int64(b.N) {
						commitNew(b, s, &next, c.gen, c.jobs)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			after := s.Stats()
			perSec := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(perSec, "commits/s")
			b.ReportMetric(perSec*float64(c.jobs), "jobs/s")
			b.ReportMetric(float64(after.Batches-before.Batches)/float64(max(after.Transactions-before.Transactions, 1)), "batches/tx")
		})
	}
}

// commitNew commits n new SUBMITTED jobs in one batch.
func commitNew(b *testing.B, s *Store, next *atomic.Int64, gen func(int) store.Job, n int) {
	batch := &store.Batch{Jobs: make([]store.Job, 0, n)}
	for range n {
		j := gen(int(next.Add(1)))
		j.Status = "SUBMITTED"
		batch.Jobs = append(batch.Jobs, j)
	}
	if err := s.Commit(context.Background(), batch); err != nil {
		b.Error(err)
	}
}

// BenchmarkJob measures point reads among 100,000 jobs.
func BenchmarkJob(b *testing.B) {
	const n = 100_000
	s := benchStore(b, n, benchJob)
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = benchJob(rng.IntN(n)).ID
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Job(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListJobs measures one page of up to 100 among 100,000 jobs,
// first page and a page deep in the listing, with and without filters.
func BenchmarkListJobs(b *testing.B) {
	const n = 100_000
	s := benchStore(b, n, benchJob)
	deep := benchJob(n / 2)
	after := store.EncodeCursor(deep.CreatedAt, deep.ID)
	cases := []struct {
		name string
		f    store.JobFilter
	}{
		{"all", store.JobFilter{}},
		{"all/deep", store.JobFilter{After: after}},
		{"queue+status", store.JobFilter{Queue: "gpu-b", Statuses: []string{"RUNNABLE"}}},
		{"queue+status/deep", store.JobFilter{Queue: "gpu-b", Statuses: []string{"RUNNABLE"}, After: after}},
		{"queue+share", store.JobFilter{Queue: "gpu-c", Share: "share-2"}},
		{"queue+created-before", store.JobFilter{Queue: "gpu-c", CreatedBefore: deep.CreatedAt}},
		{"queue+name-prefix", store.JobFilter{Queue: "gpu-a", NamePrefix: "train-1"}},
		{"name-exact", store.JobFilter{NamePrefix: benchJob(7).Name, NameExact: true}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			f := c.f
			f.Limit = 100
			for b.Loop() {
				page, _, err := s.ListJobs(ctx, f)
				if err != nil || len(page) == 0 {
					b.Fatalf("list: %d jobs, err %v", len(page), err)
				}
			}
		})
	}
}

// BenchmarkStreamJobs1M measures streaming 1,000,000 jobs with ~500-byte
// docs, which is how the engine rebuilds on start: it bounds restart time.
// Filling the database takes minutes, so it runs only when -bench names
// it (-bench=StreamJobs1M).
func BenchmarkStreamJobs1M(b *testing.B) {
	if !strings.Contains(flag.Lookup("test.bench").Value.String(), "1M") {
		b.Skip("run with -bench=StreamJobs1M")
	}
	const n = 1_000_000
	s := benchStore(b, n, orderedJob)
	ctx := context.Background()
	cpu0 := cpuTime()
	for b.Loop() {
		count := 0
		err := s.Jobs(ctx, func(store.Job) error {
			count++
			return nil
		})
		if err != nil || count != n {
			b.Fatalf("stream: %d jobs, err %v", count, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
