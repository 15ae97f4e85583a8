package core_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestFairShareReference runs random event sequences on a fair-share queue
// through the core and through fairRef, and requires the same dispatches
// in the same order at every step, and that every job waiting at the end
// of a step is one that could not be placed: its identifier's head does
// not fit the free capacity less the reservation. Sequences mix
// submissions (some infeasible), ends (some requeued), terminations,
// priority changes, policy replacements (weights with prefix entries,
// reservation, decay) and SE limit changes, with steps from a second to two
// hours apart so that usage decays; now and then the core is replaced by
// its Clone.
func TestFairShareReference(t *testing.T) {
	start := time.Now()
	ss := seeds(3000)
	steps := stepsOr(40)
	if seed := forSeeds(ss, func(seed uint64) bool { return fairSequence(seed, steps, false) == "" }); seed != 0 {
		t.Fatalf("seed %d (replay with -seed %d -run TestFairShareReference): %s", seed, seed, fairSequence(seed, steps, true))
	}
	t.Logf("%d sequences (seeds %d-%d) of %d steps in %v", len(ss), ss[0], ss[len(ss)-1], steps, time.Since(start).Round(time.Millisecond))
}

var fairIDs = []string{"a", "b", "c", "team-1", "team-2", "team-10"}

func randomFair(rng *rand.Rand) *core.FairShare {
	f := &core.FairShare{DecaySeconds: []int{0, 60, 3600, 86400}[rng.IntN(4)], Reservation: []int{0, 0, 25, 50, 99}[rng.IntN(5)]}
	for _, id := range []string{"a", "b", "team*", "team-1*", "team-2"} {
		if rng.IntN(2) == 0 {
			f.Weights = append(f.Weights, core.ShareWeight{Identifier: id, Weight: []float64{0.125, 0.5, 1, 2, 999.9999}[rng.IntN(5)]})
		}
	}
	return f
}

func randomLimits(rng *rand.Rand) []core.UnitCount {
	return []core.UnitCount{{Unit: "g5", Count: rng.IntN(6) + 1}, {Unit: "p4", Count: rng.IntN(3)}}
}

// fairSequence runs one sequence; it returns what went wrong, with the
// transcript when verbose, or "".
func fairSequence(seed uint64, steps int, verbose bool) string {
	rng := rand.New(rand.NewPCG(seed, seed^0xfa1e))
	c, m := core.New(), newFairRef()
	var log strings.Builder
	apply := func(ev core.Event) error {
		err := c.Apply(ev)
		if verbose {
			fmt.Fprintf(&log, "  %T%+v -> %v\n", ev, ev, err)
		}
		return err
	}
	limits := randomLimits(rng)
	fair := randomFair(rng)
	if apply(core.PutEnv{Name: "se", Limits: limits}) != nil || apply(core.PutQueue{Name: "fq", Env: "se", Fair: fair}) != nil {
		return "setup refused"
	}
	setLimits := func(us []core.UnitCount) {
		m.limits = map[string]int{}
		for _, u := range us {
			m.limits[u.Unit] = u.Count
		}
	}
	setLimits(limits)
	m.setPolicy(fair)
	now := t0
	next := 0
	for step := range steps {
		if rng.IntN(3) == 0 {
			now = now.Add(time.Duration(rng.IntN(7200)+1) * time.Second)
		} else {
			now = now.Add(time.Duration(rng.IntN(30)+1) * time.Second)
		}
		if verbose {
			fmt.Fprintf(&log, "step %d at %v:\n", step, now.Sub(t0))
		}
		for range rng.IntN(5) {
			live := slices.Clone(m.jobs)
			switch k := rng.IntN(10); {
			case k < 5:
				next++
				j := &fairRefJob{id: fmt.Sprintf("j%03d", next), share: fairIDs[rng.IntN(len(fairIDs))], prio: rng.IntN(3),
					queuedAt: now.UnixNano() + int64(next), demand: map[string]int{"g5": rng.IntN(3) + 1}}
				if rng.IntN(4) == 0 {
					j.demand["p4"] = rng.IntN(2) + 1
				}
				var d []core.UnitCount
				for _, u := range []string{"g5", "p4"} {
					if n := j.demand[u]; n > 0 {
						d = append(d, core.UnitCount{Unit: u, Count: n})
					}
				}
				if err := apply(core.Submit{Job: j.id, Queue: "fq", Share: j.share, Demand: d, Priority: j.prio, QueuedAt: j.queuedAt, PreemptionRetries: -1}); err != nil {
					return fmt.Sprintf("submit %s: %v\n%s", j.id, err, log.String())
				}
				m.submit(j)
			case k < 7 && len(live) > 0:
				j := live[rng.IntN(len(live))]
				if !j.dispatched {
					continue
				}
				requeue := rng.IntN(3) == 0
				if err := apply(core.AttemptEnded{Job: j.id, Requeue: requeue}); err != nil {
					return fmt.Sprintf("end %s: %v\n%s", j.id, err, log.String())
				}
				if requeue {
					j.dispatched = false
				} else {
					m.remove(j.id)
				}
			case k == 7 && len(live) > 0:
				j := live[rng.IntN(len(live))]
				if err := apply(core.Terminate{Job: j.id}); err != nil {
					return fmt.Sprintf("terminate %s: %v\n%s", j.id, err, log.String())
				}
				m.remove(j.id)
			case k == 8 && len(live) > 0:
				j := live[rng.IntN(len(live))]
				j.prio = rng.IntN(3)
				if err := apply(core.SetPriority{Job: j.id, Priority: j.prio}); err != nil {
					return fmt.Sprintf("priority %s: %v\n%s", j.id, err, log.String())
				}
			case k == 9:
				if rng.IntN(2) == 0 {
					fair = randomFair(rng)
					if err := apply(core.PutQueue{Name: "fq", Env: "se", Fair: fair}); err != nil {
						return fmt.Sprintf("policy: %v\n%s", err, log.String())
					}
					m.setPolicy(fair)
				} else {
					limits = randomLimits(rng)
					if err := apply(core.PutEnv{Name: "se", Limits: limits}); err != nil {
						return fmt.Sprintf("limits: %v\n%s", err, log.String())
					}
					setLimits(limits)
				}
			}
		}
		if rng.IntN(8) == 0 {
			// A copy decides as the original would (the dry-run and the
			// start estimates work on copies).
			c = c.Clone()
		}
		var got []string
		for _, d := range c.Step(now).List {
			if d.Kind == core.Dispatch {
				got = append(got, d.Job)
			}
		}
		want := m.step(now, true)
		if verbose {
			fmt.Fprintf(&log, "  core dispatched %v, reference %v\n", got, want)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("step %d: core dispatched %v, reference %v\n%s", step, got, want, log.String())
		}
		for name := range m.ids {
			if h := m.head(name); h != nil && m.fits(h) {
				return fmt.Sprintf("step %d: head %s of %s fits yet waits\n%s", step, h.id, name, log.String())
			}
		}
	}
	return ""
}
