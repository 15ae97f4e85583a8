// Package storetest is the conformance suite of store.Store. Every backend
// runs it from its own tests, so the engine can rely on the contract written
// on the interface rather than on one backend's behaviour:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(filepath.Join(storetest.Dir(t), "sharq.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/store"
)

// Opener returns a store for a subtest. For a t it has not seen it returns
// an empty store; called again with the same t (after the suite closed the
// first store) it returns a store over the same data, which is how the
// suite checks durability.
type Opener func(t *testing.T) store.Store

// Run checks every promise of store.Store against the stores open returns.
// Each check is a subtest with its own store; the suite closes every store
// it opens.
func Run(t *testing.T, open Opener) {
	s := suite{open: open}
	checks := []struct {
		name string
		fn   func(*testing.T, suite)
	}{
		{"CommitEmpty", testCommitEmpty},
		{"CommitAtomic", testCommitAtomic},
		{"CommitCanceled", testCommitCanceled},
		{"CommitAfterClose", testCommitAfterClose},
		{"UpsertJob", testUpsertJob},
		{"UpsertWithinBatch", testUpsertWithinBatch},
		{"UpsertResource", testUpsertResource},
		{"DeleteResources", testDeleteResources},
		{"Meta", testMeta},
		{"ResourcesOrder", testResourcesOrder},
		{"JobRoundTrip", testJobRoundTrip},
		{"JobNotFound", testJobNotFound},
		{"JobsOrder", testJobsOrder},
		{"LiveJobs", testLiveJobs},
		{"EndedTokens", testEndedTokens},
		{"CountJobs", testCountJobs},
		{"JobsStop", testJobsStop},
		{"JobsReentrant", testJobsReentrant},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"ListPagingFiltered", testListPagingFiltered},
		{"ListLimit", testListLimit},
		{"ListInvalidCursor", testListInvalidCursor},
		{"PurgeEnded", testPurgeEnded},
		{"ConcurrentCommit", testConcurrentCommit},
		{"ConcurrentBadBatch", testConcurrentBadBatch},
		{"Durable", testDurable},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.fn(t, s) })
	}
}

// dirs maps a *testing.T to its directory, so Dir is stable per test.
var dirs sync.Map

// Dir returns a directory that is the same for every call with the same t
// and removed when t ends, so a file backend's Opener can reopen its data.
func Dir(t *testing.T) string {
	t.Helper()
	if d, ok := dirs.Load(t); ok {
		return d.(string)
	}
	d := t.TempDir()
	dirs.Store(t, d)
	t.Cleanup(func() { dirs.Delete(t) })
	return d
}

type suite struct{ open Opener }

// mustOpen opens a store and closes it when t ends. Closing twice is part
// of the contract, so tests may also close it themselves.
func (s suite) mustOpen(t *testing.T) store.Store {
	t.Helper()
	st := s.open(t)
	if st == nil {
		t.Fatal("open returned a nil store")
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return st
}

// diffOpts treats nil and empty slices alike: a backend may return either
// for an empty Doc.
var diffOpts = cmpopts.EquateEmpty()

func commit(t *testing.T, st store.Store, b *store.Batch) {
	t.Helper()
	if err := st.Commit(t.Context(), b); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// newJob returns a job with defaults for every field but the two that
// order it.
func newJob(id string, createdAt int64) store.Job {
	return store.Job{
		ID:        id,
		Name:      "job-" + id,
		Queue:     "arn:aws:batch:us-east-1:000000000000:job-queue/q1",
		Share:     "s1",
		Status:    "RUNNABLE",
		CreatedAt: createdAt,
		Doc:       []byte(`{"jobId":"` + id + `"}`),
	}
}

func allJobs(t *testing.T, st store.Store) []store.Job {
	t.Helper()
	var got []store.Job
	err := st.Jobs(t.Context(), func(j store.Job) error {
		got = append(got, j)
		return nil
	})
	if err != nil {
		t.Fatalf("jobs: %v", err)
	}
	return got
}

func jobIDs(jobs []store.Job) []string {
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func resources(t *testing.T, st store.Store) []store.Resource {
	t.Helper()
	got, err := st.Resources(t.Context())
	if err != nil {
		t.Fatalf("resources: %v", err)
	}
	return got
}

func meta(t *testing.T, st store.Store, key string) string {
	t.Helper()
	v, err := st.Meta(t.Context(), key)
	if err != nil {
		t.Fatalf("meta %q: %v", key, err)
	}
	return v
}

// Ensure an empty batch commits and changes nothing.
func testCommitEmpty(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{})
	if got := allJobs(t, st); len(got) != 0 {
		t.Errorf("jobs after empty commit = %v, want none", jobIDs(got))
	}
}

// Ensure a batch with one invalid entry, placed last, writes nothing at all
// and leaves the store usable.
func testCommitAtomic(t *testing.T, s suite) {
	bad := map[string]func(*store.Batch){
		"EmptyJobID":   func(b *store.Batch) { b.Jobs = append(b.Jobs, newJob("", 9)) },
		"EmptyARN":     func(b *store.Batch) { b.Resources = append(b.Resources, store.Resource{Kind: "job-queue"}) },
		"EmptyMetaKey": func(b *store.Batch) { b.Meta[""] = "x" },
	}
	for name, spoil := range bad {
		t.Run(name, func(t *testing.T) {
			st := s.mustOpen(t)
			commit(t, st, &store.Batch{Resources: []store.Resource{{Kind: "job-queue", ARN: "arn:old"}}})
			b := &store.Batch{
				Resources:        []store.Resource{{Kind: "job-queue", ARN: "arn:new"}},
				DeletedResources: []string{"arn:old"},
				Jobs:             []store.Job{newJob("a", 1), newJob("b", 2)},
				Meta:             map[string]string{"k": "v"},
			}
			spoil(b)
			if err := st.Commit(t.Context(), b); err == nil {
				t.Fatal("commit of an invalid batch succeeded")
			}
			checkUntouched(t, st)
			commit(t, st, &store.Batch{Jobs: []store.Job{newJob("c", 3)}})
			if got, want := jobIDs(allJobs(t, st)), []string{"c"}; !cmp.Equal(got, want) {
				t.Errorf("jobs after a good commit = %v, want %v", got, want)
			}
		})
	}
}

// checkUntouched checks that the failed batch of testCommitAtomic left no
// trace.
func checkUntouched(t *testing.T, st store.Store) {
	t.Helper()
	if got := allJobs(t, st); len(got) != 0 {
		t.Errorf("jobs after failed commit = %v, want none", jobIDs(got))
	}
	want := []store.Resource{{Kind: "job-queue", ARN: "arn:old"}}
	if diff := cmp.Diff(want, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources after failed commit (-want +got):\n%s", diff)
	}
	if got := meta(t, st, "k"); got != "" {
		t.Errorf("meta after failed commit = %q, want unset", got)
	}
}

// Ensure a commit whose context is already done fails with the context's
// error and writes nothing.
func testCommitCanceled(t *testing.T, s suite) {
	st := s.mustOpen(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := st.Commit(ctx, &store.Batch{Jobs: []store.Job{newJob("a", 1)}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("commit with canceled ctx: err = %v, want context.Canceled", err)
	}
	if _, err := st.Job(t.Context(), "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job after canceled commit: err = %v, want ErrNotFound", err)
	}
}

// Ensure Commit fails after Close and a second Close does nothing.
func testCommitAfterClose(t *testing.T, s suite) {
	st := s.mustOpen(t)
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := st.Commit(t.Context(), &store.Batch{Jobs: []store.Job{newJob("a", 1)}}); err == nil {
		t.Error("commit after close succeeded")
	}
	if err := st.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// Ensure a job committed again under the same ID replaces every field, in
// point reads, in streaming and in the listing indexes.
func testUpsertJob(t *testing.T, s suite) {
	st := s.mustOpen(t)
	v1 := newJob("a", 10)
	commit(t, st, &store.Batch{Jobs: []store.Job{v1}})
	v2 := store.Job{
		ID: "a", Name: "Renamed", Queue: "q2", Share: "s2", Status: "SUCCEEDED",
		CreatedAt: 20, EndedAt: 30, Doc: []byte(`{"v":2}`),
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{v2}})

	got, err := st.Job(t.Context(), "a")
	if err != nil {
		t.Fatalf("job: %v", err)
	}
	if diff := cmp.Diff(v2, got, diffOpts); diff != "" {
		t.Errorf("job after upsert (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]store.Job{v2}, allJobs(t, st), diffOpts); diff != "" {
		t.Errorf("jobs after upsert (-want +got):\n%s", diff)
	}
	for _, f := range []store.JobFilter{{Queue: v1.Queue}, {Share: v1.Share}, {Statuses: []string{v1.Status}}, {NamePrefix: v1.Name}} {
		if got := listAll(t, st, f); len(got) != 0 {
			t.Errorf("list %+v after upsert = %v, want none", f, got)
		}
	}
	f := store.JobFilter{Queue: "q2", Share: "s2", Statuses: []string{"SUCCEEDED"}, NamePrefix: "renamed", NameExact: true}
	if got, want := listAll(t, st, f), []string{"a"}; !cmp.Equal(got, want) {
		t.Errorf("list %+v after upsert = %v, want %v", f, got, want)
	}
}

// Ensure the later of two entries with one key in one batch wins.
func testUpsertWithinBatch(t *testing.T, s suite) {
	st := s.mustOpen(t)
	first, second := newJob("a", 1), newJob("a", 2)
	second.Status = "RUNNING"
	commit(t, st, &store.Batch{
		Jobs: []store.Job{first, second},
		Resources: []store.Resource{
			{Kind: "job-queue", ARN: "arn:q", Doc: []byte("1")},
			{Kind: "job-queue", ARN: "arn:q", Doc: []byte("2")},
		},
	})
	if diff := cmp.Diff([]store.Job{second}, allJobs(t, st), diffOpts); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	want := []store.Resource{{Kind: "job-queue", ARN: "arn:q", Doc: []byte("2")}}
	if diff := cmp.Diff(want, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

// Ensure a resource committed again under the same ARN replaces it.
func testUpsertResource(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{Resources: []store.Resource{{Kind: "job-queue", ARN: "arn:x", Doc: []byte("old")}}})
	v2 := store.Resource{Kind: "quota-share", ARN: "arn:x", Doc: []byte("new")}
	commit(t, st, &store.Batch{Resources: []store.Resource{v2}})
	if diff := cmp.Diff([]store.Resource{v2}, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources after upsert (-want +got):\n%s", diff)
	}
}

// Ensure DeletedResources removes resources, ignores absent ARNs and
// applies after the batch's upserts.
func testDeleteResources(t *testing.T, s suite) {
	st := s.mustOpen(t)
	r := func(arn string) store.Resource { return store.Resource{Kind: "job-queue", ARN: arn, Doc: []byte(arn)} }
	commit(t, st, &store.Batch{Resources: []store.Resource{r("arn:1"), r("arn:2"), r("arn:3")}})
	commit(t, st, &store.Batch{DeletedResources: []string{"arn:2", "arn:absent"}})
	if diff := cmp.Diff([]store.Resource{r("arn:1"), r("arn:3")}, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources after delete (-want +got):\n%s", diff)
	}
	commit(t, st, &store.Batch{Resources: []store.Resource{r("arn:4")}, DeletedResources: []string{"arn:4", "arn:1"}})
	if diff := cmp.Diff([]store.Resource{r("arn:3")}, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources after upsert and delete in one batch (-want +got):\n%s", diff)
	}
}

// Ensure Meta returns what Batch.Meta stored, "" when unset, and that a
// later batch overwrites only the keys it names.
func testMeta(t *testing.T, s suite) {
	st := s.mustOpen(t)
	if got := meta(t, st, "a"); got != "" {
		t.Errorf("unset meta = %q, want empty", got)
	}
	commit(t, st, &store.Batch{Meta: map[string]string{"a": "1", "b": "two words"}})
	commit(t, st, &store.Batch{Meta: map[string]string{"a": "3"}})
	for key, want := range map[string]string{"a": "3", "b": "two words", "c": ""} {
		if got := meta(t, st, key); got != want {
			t.Errorf("meta %q = %q, want %q", key, got, want)
		}
	}
}

// Ensure Resources returns every resource ordered by ARN whatever the
// commit order.
func testResourcesOrder(t *testing.T, s suite) {
	st := s.mustOpen(t)
	arns := []string{"arn:m", "arn:b", "arn:z", "arn:a", "arn:k", "arn:aa"}
	for i, arn := range arns {
		commit(t, st, &store.Batch{Resources: []store.Resource{{Kind: fmt.Sprint("kind", i), ARN: arn, Doc: []byte(arn)}}})
	}
	var got []string
	for _, r := range resources(t, st) {
		got = append(got, r.ARN)
		if string(r.Doc) != r.ARN {
			t.Errorf("resource %s: doc = %q, want %q", r.ARN, r.Doc, r.ARN)
		}
	}
	want := []string{"arn:a", "arn:aa", "arn:b", "arn:k", "arn:m", "arn:z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource order (-want +got):\n%s", diff)
	}
}

// Ensure concurrent commits are all durable and visible once they return,
// and each goroutine's commits apply in its order.
func testConcurrentCommit(t *testing.T, s suite) {
	st := s.mustOpen(t)
	const writers, perWriter = 32, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				b := &store.Batch{
					Jobs: []store.Job{newJob(fmt.Sprintf("w%02d-%02d", w, i), int64(i))},
					Meta: map[string]string{fmt.Sprint("writer-", w): fmt.Sprint(i)},
				}
				if err := st.Commit(t.Context(), b); err != nil {
					t.Errorf("commit w%d/%d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := len(allJobs(t, st)); got != writers*perWriter {
		t.Errorf("jobs after concurrent commits = %d, want %d", got, writers*perWriter)
	}
	for w := range writers {
		if got, want := meta(t, st, fmt.Sprint("writer-", w)), fmt.Sprint(perWriter-1); got != want {
			t.Errorf("meta writer-%d = %q, want %q", w, got, want)
		}
	}
}

// Ensure an invalid batch committed alongside valid ones fails alone: the
// valid batches are written and acknowledged, the invalid ones leave nothing.
func testConcurrentBadBatch(t *testing.T, s suite) {
	st := s.mustOpen(t)
	const writers, perWriter = 16, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%02d-%02d", w, i)
				b := &store.Batch{Jobs: []store.Job{newJob(id, 1)}}
				bad := (w+i)%4 == 0
				if bad {
					b.Jobs = append(b.Jobs, newJob("", 1))
				}
				err := st.Commit(t.Context(), b)
				if bad != (err != nil) {
					t.Errorf("commit %s (invalid=%v): err = %v", id, bad, err)
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		for i := range perWriter {
			id := fmt.Sprintf("w%02d-%02d", w, i)
			_, err := st.Job(t.Context(), id)
			if bad := (w+i)%4 == 0; bad != errors.Is(err, store.ErrNotFound) {
				t.Errorf("job %s (invalid=%v): err = %v", id, bad, err)
			}
		}
	}
}

// Ensure what was committed survives Close and reopening, and the reopened
// store takes new commits.
func testDurable(t *testing.T, s suite) {
	st := s.mustOpen(t)
	res := []store.Resource{{Kind: "job-queue", ARN: "arn:q", Doc: []byte("q")}}
	jobs := []store.Job{newJob("a", 1), newJob("b", 2)}
	jobs[1].EndedAt = 5
	commit(t, st, &store.Batch{Resources: append(res, store.Resource{Kind: "x", ARN: "arn:gone"}), Jobs: jobs})
	commit(t, st, &store.Batch{DeletedResources: []string{"arn:gone"}, Meta: map[string]string{"version": "7"}})
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	st = s.mustOpen(t)
	if diff := cmp.Diff(res, resources(t, st), diffOpts); diff != "" {
		t.Errorf("resources after reopen (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jobs, allJobs(t, st), diffOpts); diff != "" {
		t.Errorf("jobs after reopen (-want +got):\n%s", diff)
	}
	if got := meta(t, st, "version"); got != "7" {
		t.Errorf("meta after reopen = %q, want 7", got)
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("c", 3)}})
	if got, want := jobIDs(allJobs(t, st)), []string{"a", "b", "c"}; !cmp.Equal(got, want) {
		t.Errorf("jobs after commit on reopened store = %v, want %v", got, want)
	}
}
