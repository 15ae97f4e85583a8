package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestHeadsOfChangedPools runs random sequences and, after each Step,
// checks what a reader outside the engine's lock relies on: the heads
// given for the changed pools only, applied over those given before, equal
// every share's head now; and where an untouched job waits (WaitPlace) is
// as before, unless Reconfigurations moved.
func TestHeadsOfChangedPools(t *testing.T) {
	start := time.Now()
	ss := seeds(1000)
	steps := stepsOr(60)
	if seed := forSeeds(ss, func(seed uint64) bool { return headsSequence(seed, steps) == "" }); seed != 0 {
		t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, headsSequence(seed, steps))
	}
	t.Logf("%d sequences of %d steps in %v", len(ss), steps, time.Since(start).Round(time.Millisecond))
}

func headsSequence(seed uint64, steps int) string {
	type shareKey struct{ queue, share string }
	g := newGen(seed)
	c := core.New()
	for _, ev := range g.setup() {
		if c.Apply(ev) == nil {
			g.observeEvent(ev)
		}
	}
	heads := map[shareKey]core.Head{}
	places := map[string]core.Place{} // of jobs untouched since they were read
	var reconfigs uint64
	for i := 1; i <= steps; i++ {
		touched := map[string]bool{}
		for _, ev := range g.events() {
			if c.Apply(ev) == nil {
				g.observeEvent(ev)
				switch e := ev.(type) {
				case core.SetPriority:
					touched[e.Job] = true
				case core.Terminate:
					touched[e.Job] = true
				case core.AttemptEnded:
					touched[e.Job] = true
				}
			}
		}
		ds := c.Step(g.now())
		for _, d := range ds.List {
			touched[d.Job] = true
		}
		g.observe(ds)
		all := i == 1 || c.Reconfigurations() != reconfigs
		reconfigs = c.Reconfigurations()
		if all {
			clear(heads)
			clear(places)
		}
		c.Heads(!all, func(h core.Head) { heads[shareKey{h.Queue, h.Share}] = h })
		var now []core.Head
		c.Heads(false, func(h core.Head) { now = append(now, h) })
		for _, h := range now {
			if kept := heads[shareKey{h.Queue, h.Share}]; kept != h {
				return fmt.Sprintf("step %d: share %s/%s's head kept as %+v, now %+v", i, h.Queue, h.Share, kept, h)
			}
		}
		for id := range touched {
			delete(places, id)
		}
		for id, p := range places {
			if q, ok := c.WaitPlace(id); !ok || q != p {
				return fmt.Sprintf("step %d: job %s's place kept as %+v, now %+v (waiting %v)", i, id, p, q, ok)
			}
		}
		for id := range g.live {
			if p, ok := c.WaitPlace(id); ok {
				places[id] = p
			}
		}
	}
	return ""
}
