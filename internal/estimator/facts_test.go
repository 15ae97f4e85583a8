package estimator

import (
	"fmt"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
)

// factsOnly is a Source that knows every job's facts and copies nothing.
type factsOnly struct{}

func (factsOnly) CopyLive() Live { panic("not copied here") }

func (factsOnly) JobFacts(ids []string) []Facts {
	out := make([]Facts, len(ids))
	for i, id := range ids {
		out[i] = Facts{ID: id, Queue: "q", Demand: one}
	}
	return out
}

// TestLearnForgetsEndedJobs: the facts of jobs that ended are kept until
// there are more than twice as many as live jobs (and 1024 more), then
// only the live jobs' stay.
func TestLearnForgetsEndedJobs(t *testing.T) {
	c := core.New()
	for _, ev := range []core.Event{core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: "u", Count: 1}}},
		core.PutQueue{Name: "q", Env: "se"},
		core.Submit{Job: "live", Queue: "q", Demand: []core.UnitCount{{Unit: "u", Count: 1}}, PreemptionRetries: -1}} {
		if err := c.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	x := New(factsOnly{}, Config{})
	for i := range 1025 {
		x.jobs[fmt.Sprint("ended-", i)] = &jobFacts{}
	}
	x.learn(c)
	if n := len(x.jobs); n != 1026 {
		t.Fatalf("%d jobs' facts kept at the bound, want 1026", n)
	}
	x.jobs["ended-more"] = &jobFacts{}
	x.learn(c)
	if n, f := len(x.jobs), x.jobs["live"]; n != 1 || f == nil || f.queue != "q" {
		t.Fatalf("past the bound, %d jobs' facts kept (live: %+v), want the live job's only", n, f)
	}
}
