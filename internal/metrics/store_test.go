package metrics_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sharq-dev/sharq/internal/metrics"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

type lease struct{}

func (lease) Term() int64     { return 7 }
func (lease) Renewals() int64 { return 3 }

func TestCommitsAndLease(t *testing.T) {
	m := metrics.New()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	timed := m.TimeCommits(st)
	// The engine finds the usage history through the wrapper.
	if _, ok := timed.(store.UsageStore); !ok {
		t.Error("a store timed is no longer a store.UsageStore")
	}
	for range 2 {
		if err := timed.Commit(t.Context(), &store.Batch{Meta: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
	}
	m.WatchLease(lease{})
	want := `
# HELP sharq_lease_renewals_total Successful renewals of the leader's lease.
# TYPE sharq_lease_renewals_total counter
sharq_lease_renewals_total 3
# HELP sharq_lease_term The leadership term: it rises by one at every failover or handover.
# TYPE sharq_lease_term gauge
sharq_lease_term 7
# HELP sharq_leader 1 on the server that leads (the others forward to it).
# TYPE sharq_leader gauge
sharq_leader 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "sharq_lease_term", "sharq_lease_renewals_total", "sharq_leader"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.Registry(), "sharq_store_commit_seconds"); n != 1 {
		t.Errorf("%d commit histograms", n)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "sharq_store_commit_seconds" {
			if c := mf.GetMetric()[0].GetHistogram().GetSampleCount(); c != 2 {
				t.Errorf("%d commits timed, want 2", c)
			}
		}
	}
}
