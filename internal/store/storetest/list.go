package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/store"
)

// listAll pages through ListJobs with f's Limit and returns the IDs of
// every page in order. It fails the test on an empty page that promises
// more, or on a runaway cursor.
func listAll(t *testing.T, st store.Store, f store.JobFilter) []string {
	t.Helper()
	var ids []string
	for range 100_000 {
		page, next, err := st.ListJobs(t.Context(), f)
		if err != nil {
			t.Fatalf("list %+v: %v", f, err)
		}
		ids = append(ids, jobIDs(page)...)
		if next == "" {
			return ids
		}
		if len(page) == 0 {
			t.Fatalf("list %+v: empty page with cursor %q", f, next)
		}
		f.After = next
	}
	t.Fatalf("list %+v: cursor never ended", f)
	return nil
}

// listFixture covers each filter field with cases that tell a correct
// filter from a near miss: mixed case, "_" and "%" in names, equal
// CreatedAt, jobs without a share.
func listFixture() []store.Job {
	rows := []struct {
		id, name, queue, share, status string
		created                        int64
	}{
		{"j01", "Train-1", "q1", "s1", "RUNNABLE", 100},
		{"j02", "train-10", "q1", "s1", "RUNNING", 200},
		{"j03", "TRAIN-2", "q1", "s2", "SUCCEEDED", 200},
		{"j04", "eval-1", "q2", "s1", "FAILED", 300},
		{"j05", "Eval-train", "q2", "", "RUNNABLE", 400},
		{"j06", "train-1", "q2", "s2", "RUNNING", 500},
		{"j07", "tr", "q1", "", "SUCCEEDED", 500},
		{"j08", "a_b%c", "q3", "", "RUNNABLE", 600},
		{"j09", "axb", "q3", "", "RUNNABLE", 600},
	}
	jobs := make([]store.Job, 0, len(rows))
	for _, r := range rows {
		jobs = append(jobs, store.Job{
			ID: r.id, Name: r.name, Queue: r.queue, Share: r.share, Status: r.status,
			CreatedAt: r.created, Doc: []byte(r.id),
		})
	}
	return jobs
}

// Ensure every filter field selects exactly its jobs, newest first, in one
// page and across pages of two.
func testListFilters(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{Jobs: listFixture()})
	cases := map[string]struct {
		f    store.JobFilter
		want string
	}{
		"All":                {store.JobFilter{}, "j09 j08 j07 j06 j05 j04 j03 j02 j01"},
		"EmptyStatuses":      {store.JobFilter{Statuses: []string{}}, "j09 j08 j07 j06 j05 j04 j03 j02 j01"},
		"Queue":              {store.JobFilter{Queue: "q1"}, "j07 j03 j02 j01"},
		"QueueNone":          {store.JobFilter{Queue: "nope"}, ""},
		"Share":              {store.JobFilter{Share: "s1"}, "j04 j02 j01"},
		"OtherShare":         {store.JobFilter{Share: "s2"}, "j06 j03"},
		"Status":             {store.JobFilter{Statuses: []string{"RUNNABLE"}}, "j09 j08 j05 j01"},
		"Statuses":           {store.JobFilter{Statuses: []string{"RUNNING", "SUCCEEDED"}}, "j07 j06 j03 j02"},
		"Prefix":             {store.JobFilter{NamePrefix: "train"}, "j06 j03 j02 j01"},
		"PrefixUpper":        {store.JobFilter{NamePrefix: "TRAIN-1"}, "j06 j02 j01"},
		"PrefixShort":        {store.JobFilter{NamePrefix: "tr"}, "j07 j06 j03 j02 j01"},
		"PrefixUnderscore":   {store.JobFilter{NamePrefix: "a_"}, "j08"},
		"PrefixPercent":      {store.JobFilter{NamePrefix: "a%"}, ""},
		"Exact":              {store.JobFilter{NamePrefix: "TRAIN-1", NameExact: true}, "j06 j01"},
		"ExactShort":         {store.JobFilter{NamePrefix: "tr", NameExact: true}, "j07"},
		"ExactWildcards":     {store.JobFilter{NamePrefix: "a_b%c", NameExact: true}, "j08"},
		"CreatedAfter":       {store.JobFilter{CreatedAfter: 200}, "j09 j08 j07 j06 j05 j04"},
		"CreatedBefore":      {store.JobFilter{CreatedBefore: 200}, "j01"},
		"CreatedBetween":     {store.JobFilter{CreatedAfter: 100, CreatedBefore: 500}, "j05 j04 j03 j02"},
		"QueueStatusPrefix":  {store.JobFilter{Queue: "q1", Statuses: []string{"RUNNING", "RUNNABLE"}, NamePrefix: "train"}, "j02 j01"},
		"QueueShareAfter":    {store.JobFilter{Queue: "q2", Share: "s2", CreatedAfter: 400}, "j06"},
		"QueueExactStatuses": {store.JobFilter{Queue: "q2", NamePrefix: "Eval-TRAIN", NameExact: true, Statuses: []string{"RUNNABLE"}}, "j05"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want := strings.Fields(c.want)
			f := c.f
			f.Limit = 1000
			page, next, err := st.ListJobs(t.Context(), f)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if diff := gocmp.Diff(want, jobIDs(page), diffOpts); diff != "" || next != "" {
				t.Errorf("list %+v: cursor %q, ids (-want +got):\n%s", f, next, diff)
			}
			f.Limit = 2
			if diff := gocmp.Diff(want, listAll(t, st, f), diffOpts); diff != "" {
				t.Errorf("list %+v in pages of 2 (-want +got):\n%s", f, diff)
			}
		})
	}
}

// pagingFixture returns n jobs in scrambled commit order, seven to a
// CreatedAt, with IDs that do not follow CreatedAt, and their expected
// listing order.
func pagingFixture(n int) (jobs []store.Job, newestFirst []store.Job) {
	for i := range n {
		j := newJob(fmt.Sprintf("j%04d", (i*37)%n), int64(1000+i/7))
		j.Queue = []string{"q1", "q2"}[i%2]
		j.Status = []string{"RUNNABLE", "RUNNING", "SUCCEEDED"}[i%3]
		jobs = append(jobs, j)
	}
	newestFirst = slices.Clone(jobs)
	slices.SortFunc(newestFirst, func(a, b store.Job) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	slices.Reverse(jobs)
	return jobs, newestFirst
}

// commitInBatches commits jobs in batches of size n.
func commitInBatches(t *testing.T, st store.Store, jobs []store.Job, n int) {
	t.Helper()
	for c := range slices.Chunk(jobs, n) {
		commit(t, st, &store.Batch{Jobs: c})
	}
}

// Ensure paging visits every job once, in order, with full pages until the
// last and no cursor after it, for page sizes that split runs of equal
// CreatedAt.
func testListPaging(t *testing.T, s suite) {
	st := s.mustOpen(t)
	const n = 250
	jobs, want := pagingFixture(n)
	commitInBatches(t, st, jobs, 60)
	for _, limit := range []int{1, 7, 10, 64, 250, 1000} {
		f := store.JobFilter{Limit: limit}
		var got []store.Job
		for page := 0; ; page++ {
			jobs, next, err := st.ListJobs(t.Context(), f)
			if err != nil {
				t.Fatalf("limit %d page %d: %v", limit, page, err)
			}
			got = append(got, jobs...)
			if wantLen := min(limit, n-page*limit); len(jobs) != wantLen {
				t.Fatalf("limit %d page %d: %d jobs, want %d", limit, page, len(jobs), wantLen)
			}
			if last := len(got) == n; last != (next == "") {
				t.Fatalf("limit %d page %d: cursor %q after %d of %d jobs", limit, page, next, len(got), n)
			}
			if next == "" {
				break
			}
			f.After = next
		}
		if diff := gocmp.Diff(want, got, diffOpts); diff != "" {
			t.Errorf("limit %d: pages (-want +got):\n%s", limit, diff)
		}
	}
}

// Ensure paging a filtered listing gives exactly the matching jobs, and
// that jobs committed between pages do not repeat or shift later pages.
func testListPagingFiltered(t *testing.T, s suite) {
	st := s.mustOpen(t)
	jobs, all := pagingFixture(250)
	commitInBatches(t, st, jobs, 100)
	f := store.JobFilter{Queue: "q1", Statuses: []string{"RUNNABLE", "SUCCEEDED"}, Limit: 4}
	var want []string
	for _, j := range all {
		if j.Queue == "q1" && j.Status != "RUNNING" {
			want = append(want, j.ID)
		}
	}
	if diff := gocmp.Diff(want, listAll(t, st, f)); diff != "" {
		t.Errorf("filtered pages (-want +got):\n%s", diff)
	}

	page, next, err := st.ListJobs(t.Context(), f)
	if err != nil {
		t.Fatalf("first page: %v", err)
	}
	newest := newJob("zz-newest", 1<<40)
	newest.Queue, newest.Status = "q1", "RUNNABLE"
	commit(t, st, &store.Batch{Jobs: []store.Job{newest}})
	f.After = next
	got := append(jobIDs(page), listAll(t, st, f)...)
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("pages around a new commit (-want +got):\n%s", diff)
	}
}

// Ensure Limit defaults to 100 and caps at 1000.
func testListLimit(t *testing.T, s suite) {
	st := s.mustOpen(t)
	jobs := make([]store.Job, 1001)
	for i := range jobs {
		jobs[i] = newJob(fmt.Sprintf("j%04d", i), int64(i))
	}
	commit(t, st, &store.Batch{Jobs: jobs})
	for _, c := range []struct{ limit, want int }{{0, 100}, {-5, 100}, {1, 1}, {1000, 1000}, {2000, 1000}} {
		page, next, err := st.ListJobs(t.Context(), store.JobFilter{Limit: c.limit})
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		if len(page) != c.want || next == "" {
			t.Errorf("limit %d: %d jobs, cursor %q; want %d and a cursor", c.limit, len(page), next, c.want)
		}
	}
	page, next, err := st.ListJobs(t.Context(), store.JobFilter{Limit: 1000})
	if err == nil {
		page, next, err = st.ListJobs(t.Context(), store.JobFilter{Limit: 1000, After: next})
	}
	if err != nil || len(page) != 1 || page[0].ID != "j0000" || next != "" {
		t.Errorf("last page: %v, cursor %q, err %v; want [j0000], no cursor", jobIDs(page), next, err)
	}
}

// Ensure a cursor ListJobs never returned gives ErrInvalidCursor.
func testListInvalidCursor(t *testing.T, s suite) {
	st := s.mustOpen(t)
	commit(t, st, &store.Batch{Jobs: []store.Job{newJob("a", 1)}})
	for _, after := range []string{"not a cursor", "%%%", "AAAA"} {
		_, _, err := st.ListJobs(t.Context(), store.JobFilter{After: after})
		if !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("list after %q: err = %v, want ErrInvalidCursor", after, err)
		}
	}
}
