package core_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestDifferential feeds the core and the naive reference (reference_test.go)
// the same random event sequences and compares, after every step:
//   - whether each event was accepted, and the class of the error if not;
//   - the Dispatch, Preempt and Fail decisions, exactly and in order;
//   - every Wait decision: the core reports only the heads it looked at
//     whose reason changed, so each reported Wait must carry the reason the
//     reference gives for that job now; which heads are reported is not
//     compared;
//   - every live job's status (Job), the queues' usage, fronts and sizes,
//     and whose capacity each dispatched job holds (Holdings, HoldingsOf).
//
// The core looks only at shares marked dirty; the reference looks at every
// head every time. Agreement shows the dirty-tracking misses nothing.
func TestDifferential(t *testing.T) {
	start := time.Now()
	ss := seeds(1000)
	steps := stepsOr(30)
	if seed := forSeeds(ss, func(seed uint64) bool { return differential(seed, steps, false) == "" }); seed != 0 {
		t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, differential(seed, steps, true))
	}
	t.Logf("%d sequences of %d steps in %v", len(ss), steps, time.Since(start).Round(time.Millisecond))
}

// differential runs one sequence of steps; it returns what differed, with
// the sequence's transcript when verbose.
func differential(seed uint64, steps int, verbose bool) string {
	g := newGen(seed)
	c, r := core.New(), newRef()
	log := transcript{on: verbose}
	handles := map[string]core.Handle{} // of dispatched jobs, as an engine keeps them
	apply := func(ev core.Event) string {
		evC := ev
		if e, ok := ev.(core.AttemptEnded); ok && handles[e.Job] != 0 {
			if h := handles[e.Job]; c.Handle(e.Job) == h {
				// The core finds the job by its handle alone.
				evC = core.AttemptEnded{Handle: h, Requeue: e.Requeue}
			} else {
				// A handle kept past its job's end (the ID now names
				// another job, or none) finds nothing; the ID is used.
				evC = core.AttemptEnded{Job: e.Job, Handle: h, Requeue: e.Requeue}
			}
		}
		errC, errR := c.Apply(evC), r.Apply(ev)
		log.event(ev, errC)
		if errClass(errC) != errClass(errR) {
			return fmt.Sprintf("%T%+v: core error %v, reference error %v", ev, ev, errC, errR)
		}
		if errC == nil {
			g.observeEvent(ev)
		}
		return ""
	}
	for _, ev := range g.setup() {
		if msg := apply(ev); msg != "" {
			return msg + "\n" + log.String()
		}
	}
	for i := 1; i <= steps; i++ {
		for _, ev := range g.events() {
			if msg := apply(ev); msg != "" {
				return msg + "\n" + log.String()
			}
		}
		now := g.now()
		dc, dr := c.Step(now), r.Step(now)
		log.step(i, dc)
		if msg := takeHandles(c, dc, handles); msg != "" {
			return fmt.Sprintf("step %d: %s\n%s", i, msg, log.String())
		}
		if msg := compareStep(c, r, dc, dr); msg != "" {
			return fmt.Sprintf("step %d: %s\n%s", i, msg, log.String())
		}
		g.observe(dc)
	}
	return ""
}

// takeHandles checks that each Dispatch carries its job's handle (when
// the job is still live after the step: a later preemption in the same
// step may end it), keeps them, and clears them from the decisions, which
// the reference makes without.
func takeHandles(c *core.Core, ds core.Decisions, handles map[string]core.Handle) string {
	for i, d := range ds.List {
		if d.Kind != core.Dispatch {
			continue
		}
		if h := c.Handle(d.Job); d.Handle == 0 || h != 0 && d.Handle != h {
			return fmt.Sprintf("%q carries handle %x, the job's is %x", d, d.Handle, h)
		}
		handles[d.Job] = d.Handle
		ds.List[i].Handle = 0
	}
	return ""
}

func errClass(err error) string {
	for _, e := range []error{core.ErrInvalid, core.ErrNotFound, core.ErrConflict} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return "ok"
}

// diffOf returns cmp.Diff(want, got) treating nil and empty alike, or ""
// when they are equal; the cheap check first keeps long runs fast.
func diffOf[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

func compareStep(c *core.Core, r *refCore, dc, dr core.Decisions) string {
	var acts []core.Decision
	for _, d := range dc.List {
		if d.Kind != core.Wait {
			acts = append(acts, d)
			continue
		}
		st, ok := r.Job(d.Job)
		if !ok || st.Dispatched {
			return fmt.Sprintf("core reports %q for a job that does not wait", d)
		}
		if st.Reason != d.Reason {
			return fmt.Sprintf("core reports %q; reason (-reference +core):\n%s", d, cmp.Diff(st.Reason, d.Reason))
		}
	}
	if diff := diffOf(dr.List, acts); diff != "" {
		return fmt.Sprintf("decisions (-reference +core):\n%s", diff)
	}
	return compareState(c, r)
}

// compareState compares every live job and every queue's view.
func compareState(c *core.Core, r *refCore) string {
	if c.Len() != len(r.jobs) {
		return fmt.Sprintf("core holds %d jobs, reference %d", c.Len(), len(r.jobs))
	}
	for _, s := range r.shares {
		for id, want := range r.statuses(s) {
			got, ok := c.Job(id)
			if !ok {
				return fmt.Sprintf("job %s lost by the core", id)
			}
			if want != got {
				return fmt.Sprintf("job %s (-reference +core):\n%s", id, cmp.Diff(want, got))
			}
		}
	}
	for _, q := range r.queues {
		if diff := diffOf(r.Usage(q.name), c.Usage(q.name)); diff != "" {
			return fmt.Sprintf("usage of %s (-reference +core):\n%s", q.name, diff)
		}
		holdings := r.Holdings(q.name)
		if diff := diffOf(holdings, c.Holdings(q.name)); diff != "" {
			return fmt.Sprintf("holdings of %s (-reference +core):\n%s", q.name, diff)
		}
		var ids []string
		for _, want := range holdings {
			ids = append(ids, want.Job)
		}
		some := c.HoldingsOf(ids)
		for _, want := range holdings {
			if got, ok := some[want.Job]; !ok || !reflect.DeepEqual(want, got) {
				return fmt.Sprintf("HoldingsOf %s (-reference +core):\n%s", want.Job, cmp.Diff(want, got))
			}
		}
		if diff := diffOf(r.QueueFront(q.name, 100), c.QueueFront(q.name, 100)); diff != "" {
			return fmt.Sprintf("front of %s (-reference +core):\n%s", q.name, diff)
		}
		for _, s := range r.sharesOf(q.name) {
			f, inf := r.waiting(s)
			var want []string
			for _, j := range append(f, inf...) {
				want = append(want, j.id)
			}
			if diff := diffOf(want, c.ShareFront(q.name, s.name, 1000)); diff != "" {
				return fmt.Sprintf("front of share %s/%s (-reference +core):\n%s", q.name, s.name, diff)
			}
		}
	}
	return ""
}
