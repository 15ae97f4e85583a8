package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/store"
)

// Ensure Job returns every field as committed, Doc bytes included.
func testJobRoundTrip(t *testing.T, s suite) {
	st := s.mustOpen(t)
	want := []store.Job{
		{
			ID: "j-1", Name: "Train-ÄÖ", Queue: "arn:aws:batch:us-east-1:000000000000:job-queue/gpu",
			Share: "research", Status: "FAILED", CreatedAt: 1767225600123, EndedAt: 1767225700456, ClientToken: "tok-1",
			Doc: []byte{0, 1, 2, 0xff, '{', '}'},
		},
		{ID: "j-2", Name: "n", Queue: "q", Status: "SUBMITTED", CreatedAt: 1},
	}
	commit(t, st, &store.Batch{Jobs: want})
	for _, w := range want {
		got, err := st.Job(t.Context(), w.ID)
		if err != nil {
			t.Fatalf("job %s: %v", w.ID, err)
		}
		if diff := cmp.Diff(w, got, diffOpts); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", w.ID, diff)
		}
	}
}

// Ensure a missing job gives ErrNotFound, for a new store and a used one.
func testJobNotFound(t *testing.T, s suite) {
	st := s.mustOpen(t)
	if _, err := st.Job(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job on empty store: err = %v, want ErrNotFound", err)
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 1)}})
	if _, err := st.Job(t.Context(), "A"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job with other case: err = %v, want ErrNotFound", err)
	}
}

// Ensure Jobs streams every job in CreatedAt then ID order, whatever the
// commit order, and never calls fn on an empty store.
func testJobsOrder(t *testing.T, s suite) {
	st := s.mustOpen(t)
	if got := allJobs(t, st); len(got) != 0 {
		t.Fatalf("jobs on empty store = %v", jobIDs(got))
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("e", 5), newJob("c", 3), newJob("d", 5)}})
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 9), newJob("b", 3), newJob("f", 1)}})
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("ab", 5)}})
	want := []string{"f", "b", "c", "ab", "d", "e", "a"}
	if diff := cmp.Diff(want, jobIDs(allJobs(t, st))); diff != "" {
		t.Errorf("jobs order (-want +got):\n%s", diff)
	}
}

var errStop = errors.New("stop here")

// Ensure Jobs stops at fn's first error and returns it.
func testJobsStop(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 1), newJob("b", 2), newJob("c", 3), newJob("d", 4)}})
	var seen []string
	err := st.Jobs(t.Context(), func(j store.Job) error {
		seen = append(seen, j.ID)
		if len(seen) == 2 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Errorf("jobs: err = %v, want fn's error", err)
	}
	if want := []string{"a", "b"}; !cmp.Equal(seen, want) {
		t.Errorf("jobs called fn for %v, want %v", seen, want)
	}
}

// Ensure fn may read the store while Jobs streams, as the engine does when
// it rebuilds.
func testJobsReentrant(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 1), newJob("b", 2)}})
	n := 0
	err := st.Jobs(t.Context(), func(j store.Job) error {
		n++
		got, err := st.Job(t.Context(), j.ID)
		if err != nil {
			return err
		}
		if got.ID != j.ID {
			t.Errorf("job %s inside jobs = %s", j.ID, got.ID)
		}
		_, _, err = st.ListJobs(t.Context(), store.JobFilter{})
		return err
	})
	if err != nil || n != 2 {
		t.Errorf("jobs with reads inside fn: %d calls, err = %v; want 2, nil", n, err)
	}
}

// Ensure PurgeEnded deletes exactly the jobs with 0 < EndedAt < before and
// counts them.
func testPurgeEnded(t *testing.T, s suite) {
	st := s.mustOpen(t)
	ended := map[string]int64{"live": 0, "e50": 50, "e99": 99, "e100": 100, "e150": 150}
	var b store.Batch
	for id, at := range ended {
		j := newJob(id, 1)
		j.EndedAt = at
		b.Jobs = append(b.Jobs, j)
	}
	commit(t, st, &b)
	steps := []struct {
		before int64
		want   int
		left   []string
	}{
		{before: 100, want: 2, left: []string{"e100", "e150", "live"}},
		{before: 100, want: 0, left: []string{"e100", "e150", "live"}},
		{before: 1 << 62, want: 2, left: []string{"live"}},
	}
	for _, step := range steps {
		n, err := st.PurgeEnded(t.Context(), step.before)
		if err != nil {
			t.Fatalf("purge ended before %d: %v", step.before, err)
		}
		if n != step.want {
			t.Errorf("purge ended before %d = %d, want %d", step.before, n, step.want)
		}
		if diff := cmp.Diff(step.left, jobIDs(allJobs(t, st))); diff != "" {
			t.Errorf("jobs after purge before %d (-want +got):\n%s", step.before, diff)
		}
	}
}

// Ensure LiveJobs streams only the jobs that have not ended, in CreatedAt
// then ID order, following later commits that end or revive them.
func testLiveJobs(t *testing.T, s suite) {
	st := s.mustOpen(t)
	ended := newJob("ended", 2)
	ended.Status, ended.EndedAt = "SUCCEEDED", 10
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("b", 3), ended, newJob("a", 3), newJob("c", 1)}})
	live := func() []string {
		var got []store.Job
		if err := st.LiveJobs(t.Context(), func(j store.Job) error { got = append(got, j); return nil }); err != nil {
			t.Fatal(err)
		}
		return jobIDs(got)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, live()); diff != "" {
		t.Errorf("live jobs (-want +got):\n%s", diff)
	}
	a := newJob("a", 3)
	a.Status, a.EndedAt = "FAILED", 20
	commit(t, st, &store.Batch{Jobs: []store.Job{a}})
	if diff := cmp.Diff([]string{"c", "b"}, live()); diff != "" {
		t.Errorf("live jobs after a ended (-want +got):\n%s", diff)
	}
}

// Ensure EndedTokens lists the clientTokens of the ended jobs only, in
// EndedAt order, following later commits.
func testEndedTokens(t *testing.T, s suite) {
	st := s.mustOpen(t)
	job := func(id string, token string, endedAt int64) store.Job {
		j := newJob(id, 1)
		j.ClientToken, j.EndedAt = token, endedAt
		if endedAt > 0 {
			j.Status = "SUCCEEDED"
		}
		return j
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{job("a", "tok-a", 30), job("b", "tok-b", 10), job("c", "", 20), job("d", "tok-d", 0)}})
	tokens := func() []store.EndedToken {
		var got []store.EndedToken
		if err := st.EndedTokens(t.Context(), func(e store.EndedToken) error { got = append(got, e); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []store.EndedToken{{Token: "tok-b", ID: "b", EndedAt: 10}, {Token: "tok-a", ID: "a", EndedAt: 30}}
	if diff := cmp.Diff(want, tokens()); diff != "" {
		t.Errorf("ended tokens (-want +got):\n%s", diff)
	}
	commit(t, st, &store.Batch{Jobs: []store.Job{job("d", "tok-d", 20)}})
	want = []store.EndedToken{want[0], {Token: "tok-d", ID: "d", EndedAt: 20}, want[1]}
	if diff := cmp.Diff(want, tokens()); diff != "" {
		t.Errorf("ended tokens after d ended (-want +got):\n%s", diff)
	}
}

// Ensure CountJobs counts the jobs of each status as last committed.
func testCountJobs(t *testing.T, s suite) {
	st := s.mustOpen(t)
	n, err := st.CountJobs(t.Context())
	if err != nil || len(n) != 0 {
		t.Fatalf("counts on an empty store = %v, %v", n, err)
	}
	x := newJob("x", 3)
	x.Status = "RUNNING"
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 1), newJob("b", 2), x}})
	x.Status, x.EndedAt = "SUCCEEDED", 9
	commit(t, st, &store.Batch{Jobs: []store.Job{x}})
	n, err = st.CountJobs(t.Context())
	want := map[string]int{newJob("a", 1).Status: 2, "SUCCEEDED": 1}
	if err != nil || !cmp.Equal(n, want) {
		t.Errorf("counts = %v, %v; want %v", n, err, want)
	}
}
