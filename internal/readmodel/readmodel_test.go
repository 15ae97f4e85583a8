package readmodel_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/testserver"
)

const queue = "my-sm-training-qm-jq"

// walkthrough starts a test server (a real engine over SQLite with the
// simulated executor), set up as examples/announcement.yaml says, and
// submits QS1's three jobs of one instance each: high runs on QS1's
// instance, med borrows one, low waits.
func walkthrough(t *testing.T) (eng *engine.Engine, high, med, low string) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{Config: "../../examples/announcement.yaml"})
	high, med, low = s.Submit(t, queue, "high", "QS1", 3), s.Submit(t, queue, "med", "QS1", 2), s.Submit(t, queue, "low", "QS1", 1)
	s.WaitStatus(t, high, "RUNNING")
	s.WaitStatus(t, med, "RUNNING")
	s.WaitStatus(t, low, "RUNNABLE")
	return s.Engine, high, med, low
}

// Ensure the share usage tells each share's own, borrowed, lent and idle
// capacity under its queue and environment, and the job counts.
func TestUsageOf(t *testing.T) {
	eng, _, _, _ := walkthrough(t)
	u, err := readmodel.UsageOf(t.Context(), eng)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Queues) != 1 {
		t.Fatalf("queues: %+v", u.Queues)
	}
	q := u.Queues[0]
	if q.Name != queue || q.State != "ENABLED" || q.ServiceEnvironment != "my-sm-training-qm-se" {
		t.Errorf("queue: %+v", q)
	}
	if diff := cmp.Diff([]readmodel.UnitUsage{{Unit: "ml.g5.xlarge", Limit: 3, Used: 2, Idle: 1}}, q.Capacity); diff != "" {
		t.Errorf("environment capacity (-want +got):\n%s", diff)
	}
	var names []string
	units := map[string]readmodel.UnitUsage{}
	for _, s := range q.Shares {
		names = append(names, s.Name)
		units[s.Name] = s.Units[0]
	}
	if diff := cmp.Diff([]string{"QS1", "QS2", "QS3"}, names); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	qs1 := q.Shares[0]
	if qs1.Strategy != "LEND_AND_BORROW" || qs1.BorrowLimit != 200 || !qs1.InSharePreemption || qs1.Runnable != 1 {
		t.Errorf("QS1: %+v", qs1)
	}
	if u := units["QS1"]; u.Own != 1 || u.Borrowed != 1 || len(u.BorrowedFrom) != 1 {
		t.Errorf("QS1 units: %+v", u)
	}
	if lent := units["QS2"].Lent + units["QS3"].Lent; lent != 1 {
		t.Errorf("QS2 %+v, QS3 %+v: want one lent between them", units["QS2"], units["QS3"])
	}
	if u.JobCounts["RUNNING"] != 2 || u.JobCounts["RUNNABLE"] != 1 {
		t.Errorf("job counts: %v", u.JobCounts)
	}
	if env := readmodel.EnvironmentOf(eng, "my-sm-training-qm-se"); !cmp.Equal(env.Units, q.Capacity) {
		t.Errorf("environment by name: %+v, by ARN: %+v", env.Units, q.Capacity)
	}
}

// Ensure positions tell the waiting job's place and the running jobs'
// holdings, and a running job no place.
func TestPositionsAndHoldings(t *testing.T) {
	eng, high, med, low := walkthrough(t)
	var ps []readmodel.Position
	for _, id := range []string{high, med, low} {
		j, err := eng.DescribeServiceJob(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, readmodel.PositionOf(eng, j))
	}
	readmodel.AddHoldings(eng, ps)
	h, m, l := ps[0], ps[1], ps[2]
	if h.Queue != queue || h.Share != "QS1" || h.Status != "RUNNING" || h.Priority != 3 || h.Place != 0 || h.Reason != "" {
		t.Errorf("high: %+v", h)
	}
	if diff := cmp.Diff(&readmodel.Holding{Own: []readmodel.Instances{{Unit: "ml.g5.xlarge", Count: 1}}, Borrowed: []readmodel.Loan{}}, h.Holding); diff != "" {
		t.Errorf("high's holding (-want +got):\n%s", diff)
	}
	if m.Holding == nil || len(m.Holding.Own) != 0 || len(m.Holding.Borrowed) != 1 || m.Holding.Borrowed[0].Lender == "" {
		t.Errorf("med's holding: %+v", m.Holding)
	}
	if l.Status != "RUNNABLE" || l.Place != 1 || l.Reason == "" || l.Misconfigured || l.Holding != nil {
		t.Errorf("low: %+v", l)
	}
	if w, ok := readmodel.WaitOf(eng, low); !ok || w.Place != 1 || w.Priority != 1 || w.Reason != l.Reason {
		t.Errorf("low waits %+v %v, want place 1 as its position says", w, ok)
	}
	for _, id := range []string{high, "nope"} {
		if w, ok := readmodel.WaitOf(eng, id); ok {
			t.Errorf("%s waits: %+v", id, w)
		}
	}
}

// Ensure the estimates are listed by job ID, kept from a caller that has
// them already, and present but empty before the first.
func TestEstimatesOf(t *testing.T) {
	if got := readmodel.EstimatesOf(nil, 0); got.Jobs == nil || len(got.Jobs) != 0 || got.EstimatedAt != 0 {
		t.Errorf("before the first estimates: %+v", got)
	}
	now := time.UnixMilli(1000)
	r := &forecast.Result{Now: now, Until: time.UnixMilli(5000), Stop: forecast.AtHorizon, Estimates: map[string]forecast.Estimate{
		"b": {Kind: forecast.Start, At: 2000, Basis: forecast.MaxRuntime | forecast.History},
		"a": {Kind: forecast.NotWithin, At: 5000, Basis: forecast.MaxRuntime},
		"c": {Kind: forecast.Never, At: 7},
	}}
	want := readmodel.Estimates{EstimatedAt: 1000, Until: 5000, Stop: forecast.AtHorizon.Code(), Jobs: []readmodel.JobEstimate{
		{JobID: "a", StartEstimate: readmodel.StartEstimate{Estimate: readmodel.Estimate{Kind: "NOT_WITHIN", At: 5000}, EstimatedAt: 1000}},
		{JobID: "b", StartEstimate: readmodel.StartEstimate{Estimate: readmodel.Estimate{Kind: "ESTIMATED", At: 2000, Basis: []string{"MAX_RUNTIME", "HISTORY"}}, EstimatedAt: 1000}},
		{JobID: "c", StartEstimate: readmodel.StartEstimate{Estimate: readmodel.Estimate{Kind: "NEVER"}, EstimatedAt: 1000}},
	}}
	if diff := cmp.Diff(want, readmodel.EstimatesOf(r, 999)); diff != "" {
		t.Errorf("estimates (-want +got):\n%s", diff)
	}
	if got := readmodel.EstimatesOf(r, 1000); !got.Unchanged || len(got.Jobs) != 0 || got.Jobs == nil {
		t.Errorf("since the estimates were made: %+v", got)
	}
	if got, want := readmodel.LatestEstimate(r, "b"), &want.Jobs[1].StartEstimate; !cmp.Equal(got, want) {
		t.Errorf("b's latest estimate: %+v, want %+v", got, want)
	}
	if got := readmodel.LatestEstimate(r, "d"); got != nil {
		t.Errorf("an estimate of d: %+v", got)
	}
}

// Ensure a share's limit above its environment's capacity is told, and
// one of a unit the environment lacks too, in the share's order.
func TestOversized(t *testing.T) {
	env := []readmodel.UnitUsage{{Unit: "a", Limit: 3}, {Unit: "b", Limit: 1}}
	share := []readmodel.UnitUsage{{Unit: "c", Limit: 1}, {Unit: "a", Limit: 3}, {Unit: "b", Limit: 2}}
	want := []readmodel.Oversize{{Unit: "c", Limit: 1, Capacity: 0}, {Unit: "b", Limit: 2, Capacity: 1}}
	if diff := cmp.Diff(want, readmodel.Oversized(env, share)); diff != "" {
		t.Errorf("oversized (-want +got):\n%s", diff)
	}
	if got := readmodel.Oversized(env, share[1:2]); got != nil {
		t.Errorf("a limit at capacity is oversized: %+v", got)
	}
}
