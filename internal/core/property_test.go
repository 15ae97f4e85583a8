package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestProperties runs random event sequences through the core alone and
// checks every decision of every step against the safety properties of
// spec part 2, on a plain model of the state that the events and the
// decisions themselves drive (the reference's bookkeeping, not its
// scheduler):
//   - only a share's head is dispatched, only into an ENABLED SE and
//     queue, and never a job preempted earlier at the same instant;
//   - a dispatch satisfies placeOwn or placeBorrow at that point: the SE
//     limit is never exceeded, no share takes another RESERVE share's idle
//     instances, borrowed stays within borrowCap, and the reported own and
//     borrowed parts are right;
//   - preemptions come in groups immediately followed by the dispatch of
//     the job they made room for; a cross-share victim borrows a unit the
//     preemptor needs and the preemptor then runs within its own limit; an
//     in-share victim has strictly lower priority in a share with in-share
//     preemption ENABLED; every victim set is minimal; a victim fails
//     exactly when its preemption retries are exhausted;
//   - after each step every live job is in exactly one state, none is lost
//     or duplicated, and usage agrees with the jobs;
//   - whose capacity each dispatched job holds is consistent with usage
//     and the shares' idle capacity (checkHoldings);
//   - no victim is younger than its share's minimum runtime;
//   - equal event sequences give byte-identical decisions.
func TestProperties(t *testing.T) {
	start := time.Now()
	ss := seeds(10000)
	steps := stepsOr(15)
	ok := func(seed uint64) bool {
		first, msg := properties(seed, steps, true, false)
		again, _ := properties(seed, steps, false, false)
		return msg == "" && first == again
	}
	if seed := forSeeds(ss, ok); seed != 0 {
		first, msg := properties(seed, steps, true, true)
		if msg == "" {
			again, _ := properties(seed, steps, false, false)
			msg = fmt.Sprintf("two runs of the same events decided differently:\n%s\n---\n%s", first, again)
		}
		t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, msg)
	}
	t.Logf("%d sequences of %d steps, twice each, in %v", len(ss), steps, time.Since(start).Round(time.Millisecond))
}

// properties runs one sequence, checking every step when check is set. It
// returns every step's Decisions.String(), and what went wrong if anything
// (with the sequence's transcript when verbose).
func properties(seed uint64, steps int, check, verbose bool) (string, string) {
	g := newGen(seed)
	c, m := core.New(), newRef()
	log := transcript{on: verbose}
	var out strings.Builder
	apply := func(ev core.Event) string {
		err := c.Apply(ev)
		log.event(ev, err)
		if err == nil && check {
			if errM := m.Apply(ev); errM != nil {
				return fmt.Sprintf("%T%+v: the core accepted what the model refuses (%v)", ev, ev, errM)
			}
		}
		if err == nil {
			g.observeEvent(ev)
		}
		return ""
	}
	for _, ev := range g.setup() {
		if msg := apply(ev); msg != "" {
			return out.String(), msg
		}
	}
	for i := 1; i <= steps; i++ {
		for _, ev := range g.events() {
			if msg := apply(ev); msg != "" {
				return out.String(), msg + "\n" + log.String()
			}
		}
		now := g.now()
		ds := c.Step(now)
		log.step(i, ds)
		out.WriteString(ds.String())
		if check {
			if err := checkStep(m, now, ds); err != nil {
				return out.String(), fmt.Sprintf("step %d: %v\n%s", i, err, log.String())
			}
			if err := checkState(c, m); err != nil {
				return out.String(), fmt.Sprintf("step %d: %v\n%s", i, err, log.String())
			}
		}
		g.observe(ds)
		out.WriteString("--\n")
	}
	return out.String(), ""
}

// checkStep checks one step's decisions in order, applying each to model m.
func checkStep(m *refCore, now time.Time, ds core.Decisions) error {
	m.now = now.UnixNano()
	list := ds.List
	// Deletions decided in Apply come first, as the model decided them.
	for _, want := range m.pending {
		if len(list) == 0 || !equalDecision(list[0], want) {
			return fmt.Errorf("want %q first (a deletion), got %v", want, list)
		}
		list = list[1:]
	}
	m.pending = nil
	for len(list) > 0 {
		d := list[0]
		switch d.Kind {
		case core.Wait:
			if j := m.job(d.Job); j == nil || j.dispatched {
				return fmt.Errorf("%q: the job does not wait", d)
			}
			list = list[1:]
		case core.Dispatch:
			if err := checkDispatch(m, d, nil); err != nil {
				return err
			}
			list = list[1:]
		case core.Preempt:
			n, err := checkPreemption(m, list)
			if err != nil {
				return err
			}
			list = list[n:]
		default:
			return fmt.Errorf("%q: a failure that follows no preemption or deletion", d)
		}
	}
	return nil
}

func equalDecision(a, b core.Decision) bool { return a.String() == b.String() && a.Reason == b.Reason }

// checkDispatch checks that dispatch d is allowed now and applies it.
// victims are the jobs just preempted for it.
func checkDispatch(m *refCore, d core.Decision, victims []*refJob) error {
	j := m.job(d.Job)
	if j == nil || j.dispatched {
		return fmt.Errorf("%q: the job is not RUNNABLE", d)
	}
	s := m.shareOf(j)
	e := m.envOf(s)
	switch {
	case m.heldNow(j):
		return fmt.Errorf("%q: the job was preempted earlier at this instant", d)
	case e.disabled || m.queueOf(s).disabled:
		return fmt.Errorf("%q: the SE or queue is DISABLED", d)
	case m.head(s) != j:
		return fmt.Errorf("%q: not the head of its share (head-of-line)", d)
	case d.Share != s.name || d.Queue != s.queue:
		return fmt.Errorf("%q: wrong share or queue", d)
	}
	want := core.Decision{Kind: core.Dispatch, Job: j.id, Queue: j.queue, Share: j.share, Via: d.Via}
	for _, u := range j.units {
		own := j.demand[u]
		if s.strategy != 0 {
			own = min(own, m.ownIdle(s, u))
		}
		if own > 0 {
			want.Own = append(want.Own, core.UnitCount{Unit: u, Count: own})
		}
		if j.demand[u] > own {
			want.Borrowed = append(want.Borrowed, core.UnitCount{Unit: u, Count: j.demand[u] - own})
		}
	}
	if !slices.Equal(want.Own, d.Own) || !slices.Equal(want.Borrowed, d.Borrowed) {
		return fmt.Errorf("%q: want own=%v borrowed=%v", d, want.Own, want.Borrowed)
	}
	if s.strategy == 0 {
		if !m.seFits(j) {
			return fmt.Errorf("%q: exceeds the SE's free capacity", d)
		}
	} else {
		for _, u := range j.units {
			// The SE limit is a hard cap, and RESERVE shares keep their
			// idle instances: free(s,T) counts both.
			if m.free(s, u) < j.demand[u] {
				return fmt.Errorf("%q: needs %d %s, share may take %d (SE free %d)", d, j.demand[u], u, m.free(s, u), m.seFree(e, u))
			}
		}
		if !m.placeOwn(j) && !m.placeBorrow(j) {
			return fmt.Errorf("%q: neither placeOwn nor placeBorrow holds", d)
		}
	}
	before := map[string]int{}
	for _, u := range j.units {
		before[u] = m.borrowed(s, u)
	}
	j.dispatched, j.dispatchedAt = true, m.now
	for _, u := range j.units {
		if m.seFree(e, u) < 0 {
			return fmt.Errorf("%q: SE limit of %s exceeded", d, u)
		}
		if c := borrowCap(s, u); s.strategy != 0 && c >= 0 && m.borrowed(s, u) > c && m.borrowed(s, u) > before[u] {
			return fmt.Errorf("%q: %s borrows %d %s, beyond its borrow cap %d", d, s.name, m.borrowed(s, u), u, c)
		}
	}
	wantVia := core.ViaIdle
	for _, v := range victims {
		if v.share == j.share {
			wantVia = core.ViaInShare
		} else if wantVia == core.ViaIdle {
			wantVia = core.ViaReclaim
		}
	}
	if d.Via != wantVia {
		return fmt.Errorf("%q: via %s, want %s", d, d.Via, wantVia)
	}
	return nil
}

// checkPreemption checks the group of preemptions at the start of list and
// the dispatch that must follow it; it returns how many decisions it used.
func checkPreemption(m *refCore, list []core.Decision) (int, error) {
	h := m.job(list[0].For)
	if h == nil || h.dispatched {
		return 0, fmt.Errorf("%q: for a job that is not RUNNABLE", list[0])
	}
	var victims []*refJob
	var decs []core.Decision
	n := 0
	for n < len(list) && list[n].Kind == core.Preempt {
		d := list[n]
		v := m.job(d.Job)
		if v == nil || !v.dispatched || slices.Contains(victims, v) {
			return 0, fmt.Errorf("%q: the victim is not dispatched", d)
		}
		if d.For != h.id {
			return 0, fmt.Errorf("%q: preemptions for %s and %s interleave", d, h.id, d.For)
		}
		victims, decs = append(victims, v), append(decs, d)
		n++
		retriesLeft := v.retries < 0 || v.preempted+1 <= v.retries
		if d.Requeued != retriesLeft {
			return 0, fmt.Errorf("%q: requeued=%v with %d retries after %d preemptions", d, d.Requeued, v.retries, v.preempted)
		}
		if !d.Requeued {
			if n == len(list) || list[n].Kind != core.Fail || list[n].Job != v.id || list[n].Reason.Code != core.ReasonRetriesExhausted {
				return 0, fmt.Errorf("%q: not followed by its failure", d)
			}
			n++
		}
	}
	if n == len(list) || list[n].Kind != core.Dispatch || list[n].Job != h.id {
		return 0, fmt.Errorf("preemptions for %s not followed at once by its dispatch", h.id)
	}
	cross := false
	for i, v := range victims {
		if err := checkVictim(m, h, v, decs[i]); err != nil {
			return 0, err
		}
		cross = cross || v.share != h.share
	}
	if err := checkMinimal(m, h, victims, cross); err != nil {
		return 0, err
	}
	for i, v := range victims {
		v.dispatched = false
		v.preempted++
		v.held, v.heldAt = true, m.now
		if !decs[i].Requeued {
			m.remove(v)
		}
	}
	if cross && (len(list[n].Borrowed) > 0 || !m.ownFit(h)) {
		return 0, fmt.Errorf("%q: cross-share preemption for a job that borrows", list[n])
	}
	if err := checkDispatch(m, list[n], victims); err != nil {
		return 0, err
	}
	return n + 1, nil
}

// checkVictim checks one victim against the state before the group: a
// cross-share victim borrows a unit the preemptor needs (borrowing only
// grows as jobs are added, so it borrowed too when it was chosen); an
// in-share one has strictly lower priority in a share with in-share
// preemption ENABLED.
func checkVictim(m *refCore, h, v *refJob, d core.Decision) error {
	hs, vs := m.shareOf(h), m.shareOf(v)
	if m.protected(v) {
		return fmt.Errorf("%q: the victim was dispatched %v ago, within its share's minimum runtime of %v", d,
			time.Duration(m.now-v.dispatchedAt), time.Duration(vs.minRuntime))
	}
	if d.ForShare != hs.name || d.Share != vs.name {
		return fmt.Errorf("%q: wrong shares", d)
	}
	if vs == hs {
		switch {
		case d.Preemption != core.InShare || d.Reason != (core.Reason{Code: core.ReasonPreemptedInShare, Job: h.id, Share: hs.name}):
			return fmt.Errorf("%q: an in-share preemption not reported as one", d)
		case !hs.inShare:
			return fmt.Errorf("%q: in-share preemption in share %s, where it is DISABLED", d, hs.name)
		case v.prio >= h.prio:
			return fmt.Errorf("%q: victim priority %d is not below %d", d, v.prio, h.prio)
		}
		return nil
	}
	if d.Preemption != core.CrossShare || d.Reason != (core.Reason{Code: core.ReasonPreemptedCrossShare, Job: h.id, Share: hs.name}) {
		return fmt.Errorf("%q: a cross-share preemption not reported as one", d)
	}
	for _, u := range h.units {
		if m.borrowsUnit(vs, v, u) {
			return nil
		}
	}
	return fmt.Errorf("%q: the victim borrows no unit %s needs", d, h.id)
}

// checkMinimal checks that the head would not fit with any one victim
// spared. With a cross-share victim it must fit within its own limit.
func checkMinimal(m *refCore, h *refJob, victims []*refJob, cross bool) error {
	defer clear(m.gone)
	fits := func() bool { return m.placeOwn(h) || (!cross && m.placeBorrow(h)) }
	for _, spared := range victims {
		clear(m.gone)
		for _, v := range victims {
			m.gone[v] = v != spared
		}
		if fits() {
			return fmt.Errorf("preemptions for %s: not minimal, %s need not be preempted", h.id, spared.id)
		}
	}
	return nil
}

// checkState checks that the core holds exactly the model's jobs, each in
// one state, and that usage agrees with them.
func checkState(c *core.Core, m *refCore) error {
	if c.Len() != len(m.jobs) {
		return fmt.Errorf("the core holds %d jobs, the model %d", c.Len(), len(m.jobs))
	}
	for _, j := range m.jobs {
		st, ok := c.Job(j.id)
		r, waits := c.WaitReason(j.id)
		switch {
		case !ok:
			return fmt.Errorf("job %s lost", j.id)
		case st.Dispatched != j.dispatched:
			return fmt.Errorf("job %s: dispatched=%v, the decisions say %v", j.id, st.Dispatched, j.dispatched)
		case st.Dispatched != (st.Position < 0):
			return fmt.Errorf("job %s: dispatched=%v at position %d", j.id, st.Dispatched, st.Position)
		case waits == st.Dispatched || r != st.Reason:
			return fmt.Errorf("job %s: WaitReason %v %q, Job says dispatched=%v %q", j.id, waits, r.String(), st.Dispatched, st.Reason.String())
		}
	}
	for _, q := range m.queues {
		seen := map[string]bool{}
		for _, s := range m.sharesOf(q.name) {
			for _, id := range c.ShareFront(q.name, s.name, 1<<30) {
				j := m.job(id)
				if j == nil || j.dispatched || j.share != s.name || seen[id] {
					return fmt.Errorf("share %s lists %s, which does not wait there (or twice)", s.name, id)
				}
				seen[id] = true
			}
		}
		waiting := 0
		for _, j := range m.jobs {
			if j.queue == q.name && !j.dispatched {
				waiting++
			}
		}
		if waiting != len(seen) {
			return fmt.Errorf("queue %s: %d jobs wait, the shares list %d", q.name, waiting, len(seen))
		}
		for _, su := range c.Usage(q.name) {
			s := m.share(q.name, su.Share)
			for _, uu := range su.Units {
				if uu.Used != m.use(s, uu.Unit) {
					return fmt.Errorf("share %s uses %d %s, its jobs hold %d", su.Share, uu.Used, uu.Unit, m.use(s, uu.Unit))
				}
			}
		}
		if err := checkHoldings(c, m, q); err != nil {
			return err
		}
	}
	return nil
}
