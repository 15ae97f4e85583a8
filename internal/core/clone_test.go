package core_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestClone: a copy taken at any point of a random sequence (between two
// steps, or after a step's events and before the step) decides exactly as
// the original for the rest of the sequence, and answers the same queries;
// changing another copy at will leaves the original as it was. EachJob
// reports every live job once, as Job sees it.
func TestClone(t *testing.T) {
	ss := seeds(500)
	steps := stepsOr(30)
	if seed := forSeeds(ss, func(seed uint64) bool { return cloneSequence(seed, steps) == "" }); seed != 0 {
		t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, cloneSequence(seed, steps))
	}
}

func cloneSequence(seed uint64, steps int) string {
	g := newGen(seed)
	c := core.New()
	for _, ev := range g.setup() {
		if err := c.Apply(ev); err != nil {
			return fmt.Sprintf("setup %T%+v: %v", ev, ev, err)
		}
		g.observeEvent(ev)
	}
	at, beforeStep := 1+int(seed%uint64(steps)), seed%2 == 0
	var cl *core.Core
	take := func(i int) string {
		before := snapshot(c, g)
		churn(c.Clone(), g)
		if after := snapshot(c, g); !reflect.DeepEqual(before, after) {
			return fmt.Sprintf("step %d: changing a copy changed the original: %s", i, diffOf(before, after))
		}
		cl = c.Clone()
		if got := snapshot(cl, g); !reflect.DeepEqual(before, got) {
			return fmt.Sprintf("step %d: the copy differs: %s", i, diffOf(before, got))
		}
		return checkEachJob(cl, g)
	}
	for i := 1; i <= steps; i++ {
		for _, ev := range g.events() {
			errC := c.Apply(ev)
			if cl != nil {
				if errK := cl.Apply(ev); errClass(errK) != errClass(errC) {
					return fmt.Sprintf("step %d: %T%+v: original %v, copy %v", i, ev, ev, errC, errK)
				}
			}
			if errC == nil {
				g.observeEvent(ev)
			}
		}
		if i == at && beforeStep {
			if msg := take(i); msg != "" {
				return msg
			}
		}
		now := g.now()
		dc := c.Step(now)
		if cl != nil {
			if dk := cl.Step(now); !slices.EqualFunc(dc.List, dk.List, equalDecision) {
				return fmt.Sprintf("step %d: original decided\n%scopy decided\n%s", i, dc, dk)
			}
		}
		g.observe(dc)
		if i == at && !beforeStep {
			if msg := take(i); msg != "" {
				return msg
			}
		}
		if cl != nil {
			if want, got := snapshot(c, g), snapshot(cl, g); !reflect.DeepEqual(want, got) {
				return fmt.Sprintf("step %d: the copy answers differently: %s", i, diffOf(want, got))
			}
		}
	}
	return ""
}

// churn changes a core as much as it can: every dispatched job ends, some
// jobs are terminated, new ones come, the environment shrinks, and it
// steps far ahead.
func churn(c *core.Core, g *gen) {
	for _, id := range sortedKeys(g.dispatched) {
		c.Apply(core.AttemptEnded{Job: id, Requeue: len(id)%2 == 0})
	}
	for i, id := range sortedKeys(g.live) {
		if i%3 == 0 {
			c.Apply(core.Terminate{Job: id})
		}
	}
	for i := range 5 {
		c.Apply(core.Submit{Job: fmt.Sprintf("churn%d", i), Queue: genQueue, Share: g.pick(sortedKeys(g.shares)),
			Demand: []core.UnitCount{{Unit: g.units[0], Count: 1}}, Priority: 9, PreemptionRetries: -1})
	}
	c.Apply(core.PutEnv{Name: genEnv, Limits: []core.UnitCount{{Unit: g.units[0], Count: 1}}})
	c.Step(g.now().Add(time.Hour))
	c.Step(g.now().Add(2 * time.Hour))
}

// checkEachJob compares EachJob with what Job says of every live job.
func checkEachJob(c *core.Core, g *gen) string {
	seen := map[string]bool{}
	var msg string
	c.EachJob(func(j core.LiveJob) bool {
		st, ok := c.Job(j.ID)
		switch {
		case seen[j.ID]:
			msg = "EachJob reported " + j.ID + " twice"
		case !ok || !g.live[j.ID]:
			msg = "EachJob reported " + j.ID + ", which is not live"
		case st.Dispatched != j.Dispatched || st.Queue != j.Queue || st.Share != j.Share:
			msg = fmt.Sprintf("EachJob reported %+v, Job says %+v", j, st)
		case !j.Dispatched && st.Reason.Misconfiguration() && !j.Stuck:
			msg = fmt.Sprintf("EachJob reported %+v, which cannot run as configured (%s), as not stuck", j, st.Reason)
		}
		seen[j.ID] = true
		return msg == ""
	})
	if msg == "" && len(seen) != c.Len() {
		msg = fmt.Sprintf("EachJob reported %d jobs of %d", len(seen), c.Len())
	}
	return msg
}

// TestCopyOfDrainedCore: a copy of a core whose queue drained leaves out
// the slabs with no live job, and still finds every live job by ID and by
// handle, finds nothing by a handle of a job that left, and takes new jobs
// (into a slab it left out) as the original does.
func TestCopyOfDrainedCore(t *testing.T) {
	c := core.New()
	mustApply(t, c, core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: "u", Count: 1}}})
	mustApply(t, c, core.PutQueue{Name: "q", Env: "se"})
	submit := func(c *core.Core, id string) {
		mustApply(t, c, core.Submit{Job: id, Queue: "q", Demand: []core.UnitCount{{Unit: "u", Count: 2}}, PreemptionRetries: -1})
	}
	for i := range 1500 {
		submit(c, fmt.Sprint("j", i))
	}
	gone := c.Handle("j1024")
	for i := 1024; i < 1500; i++ { // the second slab empties
		mustApply(t, c, core.Terminate{Job: fmt.Sprint("j", i)})
	}
	cl := c.Clone()
	if cl.Len() != 1024 {
		t.Fatalf("the copy holds %d jobs, want 1024", cl.Len())
	}
	for i := range 1024 {
		id := fmt.Sprint("j", i)
		if h := c.Handle(id); h == 0 || cl.Handle(id) != h {
			t.Fatalf("job %s: handle %x in the copy, %x in the original", id, cl.Handle(id), h)
		}
	}
	if err := cl.Apply(core.AttemptEnded{Handle: gone}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the handle of a job that left gives %v in the copy", err)
	}
	for i := 2000; i < 3500; i++ {
		submit(c, fmt.Sprint("j", i))
		submit(cl, fmt.Sprint("j", i))
	}
	now := time.Unix(1, 0)
	if dc, dk := c.Step(now), cl.Step(now); !slices.EqualFunc(dc.List, dk.List, equalDecision) {
		t.Fatalf("original decided\n%scopy decided\n%s", dc, dk)
	}
	for i := 2000; i < 3500; i++ {
		if id := fmt.Sprint("j", i); cl.Handle(id) == 0 {
			t.Fatalf("the copy lost job %s", id)
		}
	}
}
