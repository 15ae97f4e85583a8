package core_test

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/sim"
)

// TestSimDifferential replays random traces through the simulator (the
// engine and core behind `sharq sim`, reading the trace and the config as
// sharq sim does) and through the reference of scheduling.md part 2
// (reference_test.go), and compares what each did, decision by decision:
// every dispatch (own or borrowed, and how), preemption, failure, end and
// cancellation, with its time, in order. The traces are made of whole
// seconds with few of them, so that ends of attempts, submissions, priority
// changes and cancellations often fall on one instant; the reference takes
// everything due at an instant as one batch and runs one cycle (2.3).
//
// It lives beside the reference, which is a test of this package.
func TestSimDifferential(t *testing.T) {
	start := time.Now()
	ss := seeds(1000)
	if seed := forSeeds(ss, func(seed uint64) bool { return simDifferential(seed, false) == "" }); seed != 0 {
		t.Fatalf("seed %d (replay with -run TestSimDifferential -seed %d): %s", seed, seed, simDifferential(seed, true))
	}
	t.Logf("%d traces in %v", len(ss), time.Since(start).Round(time.Millisecond))
}

const (
	simQueue = "q"
	simEnv   = "se"
)

var simUnits = []string{"ml.g5.xlarge", "ml.p4d.24xlarge"}

// simCase is one random configuration and trace, as the files sharq sim
// reads.
type simCase struct {
	config string // YAML
	trace  string // CSV
}

func newSimCase(seed uint64) simCase {
	rng := rand.New(rand.NewPCG(seed, seed^0xd1ff))
	// Even seeds give shares minimum runtimes before preemption, drawn
	// apart so that odd seeds keep the cases they had before them.
	minRng := rand.New(rand.NewPCG(seed^0x3141, seed))
	units := simUnits[:1+rng.IntN(2)]
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "schedulingPolicies:\n  - name: qm\n    quotaSharePolicy: {idleResourceAssignmentStrategy: FIFO}\n")
	fmt.Fprintf(&cfg, "serviceEnvironments:\n  - name: %s\n    capacityLimits:\n", simEnv)
	for _, u := range units {
		fmt.Fprintf(&cfg, "      - {capacityUnit: %s, maxCapacity: %d}\n", u, 1+rng.IntN(5))
	}
	fmt.Fprintf(&cfg, "jobQueues:\n  - name: %s\n    schedulingPolicy: qm\n    serviceEnvironments: [%s]\n    quotaShares:\n", simQueue, simEnv)
	shares := []string{"A", "B", "C", "D"}[:2+rng.IntN(3)]
	for _, s := range shares {
		fmt.Fprintf(&cfg, "      - name: %s\n        capacityLimits:\n", s)
		for i, u := range units {
			if i == 0 || rng.IntN(2) == 0 {
				fmt.Fprintf(&cfg, "          - {capacityUnit: %s, maxCapacity: %d}\n", u, 1+rng.IntN(3))
			}
		}
		switch strategy := []string{"RESERVE", "LEND", "LEND_AND_BORROW", "LEND_AND_BORROW"}[rng.IntN(4)]; strategy {
		case "LEND_AND_BORROW":
			fmt.Fprintf(&cfg, "        resourceSharingConfiguration: {strategy: %s, borrowLimit: %d}\n", strategy, []int{-1, 0, 50, 100, 200}[rng.IntN(5)])
		default:
			fmt.Fprintf(&cfg, "        resourceSharingConfiguration: {strategy: %s}\n", strategy)
		}
		fmt.Fprintf(&cfg, "        preemptionConfiguration: {inSharePreemption: %s}\n", []string{"ENABLED", "DISABLED"}[rng.IntN(2)])
		if seed%2 == 0 {
			if m := []int{0, 1, 2, 3, 5}[minRng.IntN(5)]; m > 0 {
				fmt.Fprintf(&cfg, "        sharq: {minimumRuntimeSeconds: %d}\n", m)
			}
		}
	}

	var tr strings.Builder
	tr.WriteString("at,event,job,share,priority,instance_type,instance_count,runtime,preemption_retries\n")
	n := 4 + rng.IntN(20)
	span := 1 + rng.IntN(12) // seconds over which jobs arrive: few, so many coincide
	for i := range n {
		at := rng.IntN(span)
		retries := ""
		if rng.IntN(4) == 0 {
			retries = fmt.Sprint(rng.IntN(3))
		}
		fmt.Fprintf(&tr, "%d,submit,j%02d,%s,%d,%s,%d,%d,%s\n", at, i, shares[rng.IntN(len(shares))], rng.IntN(5),
			units[rng.IntN(len(units))], []int{1, 1, 1, 2, 2, 3}[rng.IntN(6)], 1+rng.IntN(8), retries)
		for rng.IntN(3) == 0 {
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&tr, "%d,cancel,j%02d,,,,,,\n", at+rng.IntN(10), i)
			} else {
				fmt.Fprintf(&tr, "%d,priority,j%02d,,%d,,,,\n", at+rng.IntN(10), i, rng.IntN(5))
			}
		}
	}
	return simCase{config: cfg.String(), trace: tr.String()}
}

// simDifferential runs one random trace both ways; it returns what
// differed, with the case when verbose.
func simDifferential(seed uint64, verbose bool) string {
	c := newSimCase(seed)
	describe := func(msg string) string {
		if verbose {
			msg += "\nconfig:\n" + c.config + "trace:\n" + c.trace
		}
		return msg
	}
	cfg, err := clusterconfig.Parse(strings.NewReader(c.config))
	if err != nil {
		return describe("config: " + err.Error())
	}
	w, err := sim.ReadTrace(bufio.NewReader(strings.NewReader(c.trace)), "csv")
	if err != nil {
		return describe("trace: " + err.Error())
	}
	s, err := sim.New(context.Background(), w, cfg, sim.Options{Timeline: true})
	if err != nil {
		return describe(err.Error())
	}
	r, err := s.Run(context.Background())
	if err != nil {
		return describe(err.Error())
	}
	got := make([]string, len(r.Timeline))
	for i, e := range r.Timeline {
		got[i] = fmt.Sprintf("%4gs %-10s %s %s: %s", e.At, e.Event, e.Job, e.Share, e.Detail)
	}
	want, err := replayOnReference(cfg, w)
	if err != nil {
		return describe("reference: " + err.Error())
	}
	sortEnds(want)
	sortEnds(got)
	if d := diffOf(want, got); d != "" {
		return describe("timeline (-reference +sim):\n" + d + "\nthe simulator's timeline:\n" + strings.Join(got, "\n"))
	}
	return ""
}

// replayOnReference replays w on the reference in virtual time, as the
// simulator's executor would run it: an attempt runs from its dispatch for
// the job's runtime, and a preempted one starts again from scratch (no
// checkpoints). At each instant it applies, in this order, the ends of
// attempts, the submissions and the trace's changes, then steps once. It
// also steps when a dispatched job reaches its share's minimum runtime:
// the simulator must run a cycle then whenever that lets a job move.
func replayOnReference(cfg *clusterconfig.Config, w *sim.Workload) ([]string, error) {
	r := newRef()
	for _, ev := range configEvents(cfg) {
		if err := r.Apply(ev); err != nil {
			return nil, fmt.Errorf("%T%+v: %v", ev, ev, err)
		}
	}
	type change struct {
		at   time.Duration
		job  int
		what sim.Change
	}
	var changes []change
	for i, j := range w.Jobs {
		for _, c := range j.Changes {
			changes = append(changes, change{c.At, i, c})
		}
	}
	// In time order; at one instant, in the order of the jobs and then of
	// each job's changes, as the simulator queues them.
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	byID := map[string]int{}
	for i, j := range w.Jobs {
		byID[j.ID] = i
	}
	running := map[int]time.Duration{} // a dispatched job's end
	var out []string
	note := func(now time.Duration, i int, event, detail string) {
		j := w.Jobs[i]
		out = append(out, fmt.Sprintf("%4gs %-10s %s %s: %s", now.Seconds(), event, j.ID, j.Share, detail))
	}
	var lastQ int64
	last := time.Duration(-1) // the last instant stepped
	next, nextChange := 0, 0
	for {
		now, ok := time.Duration(0), false
		consider := func(t time.Duration) {
			if !ok || t < now {
				now, ok = t, true
			}
		}
		if next < len(w.Jobs) {
			consider(w.Jobs[next].At)
		}
		if nextChange < len(changes) {
			consider(changes[nextChange].at)
		}
		for _, end := range running {
			consider(end)
		}
		for _, j := range r.jobs {
			if m := r.shareOf(j).minRuntime; j.dispatched && m > 0 {
				if end := time.Duration(j.dispatchedAt + m - sim.Epoch.UnixNano()); end > last {
					consider(end)
				}
			}
		}
		if !ok {
			return out, nil
		}
		last = now
		var ends []int
		for i, end := range running {
			if end == now {
				ends = append(ends, i)
			}
		}
		slices.Sort(ends)
		for _, i := range ends {
			delete(running, i)
			if err := r.Apply(core.AttemptEnded{Job: w.Jobs[i].ID}); err != nil {
				return nil, err
			}
			note(now, i, "succeeded", "Training job completed")
		}
		at := sim.Epoch.Add(now).UnixNano()
		for ; next < len(w.Jobs) && w.Jobs[next].At == now; next++ {
			j := w.Jobs[next]
			retries := -1
			if j.PreemptionRetries != nil {
				retries = *j.PreemptionRetries
			}
			lastQ = max(at, lastQ+1) // the engine's queue times: distinct, in submission order
			ev := core.Submit{Job: j.ID, Queue: simQueue, Share: j.Share, Priority: j.Priority, QueuedAt: lastQ, PreemptionRetries: retries,
				Demand: []core.UnitCount{{Unit: j.InstanceType, Count: j.Count}}}
			if err := r.Apply(ev); err != nil {
				return nil, fmt.Errorf("%+v: %v", ev, err)
			}
		}
		for ; nextChange < len(changes) && changes[nextChange].at == now; nextChange++ {
			c := changes[nextChange]
			id := w.Jobs[c.job].ID
			if _, live := r.Job(id); !live {
				continue // ended: the engine refuses the change, which changes nothing
			}
			if c.what.Cancel {
				if err := r.Apply(core.Terminate{Job: id}); err != nil {
					return nil, err
				}
				delete(running, c.job)
				note(now, c.job, "cancelled", "Cancelled by the trace")
			} else if err := r.Apply(core.SetPriority{Job: id, Priority: c.what.Priority}); err != nil {
				return nil, err
			}
		}
		for _, d := range r.Step(sim.Epoch.Add(now)).List {
			i := byID[d.Job]
			switch d.Kind {
			case core.Dispatch:
				how := "own"
				if len(d.Borrowed) > 0 {
					how = "borrowed"
				}
				if d.Via != core.ViaIdle {
					how += ", " + d.Via.String()
				}
				note(now, i, "dispatched", how)
				running[i] = now + w.Jobs[i].Runtime
			case core.Preempt:
				delete(running, i)
				if d.Requeued {
					note(now, i, "preempted", d.Reason.String())
				}
			case core.Fail:
				delete(running, i)
				note(now, i, "failed", d.Reason.String())
			}
		}
	}
}

// sortEnds sorts each run of attempts that succeeded at one instant: they
// are applied together before the instant's cycle, so the order in which
// the executor reported them decides nothing.
func sortEnds(timeline []string) {
	ends := func(i int) bool { return strings.Contains(timeline[i], " succeeded ") }
	instant := func(i int) string { return strings.Fields(timeline[i])[0] }
	for i := 0; i < len(timeline); {
		j := i + 1
		for ends(i) && j < len(timeline) && ends(j) && instant(j) == instant(i) {
			j++
		}
		slices.Sort(timeline[i:j])
		i = j
	}
}

// configEvents are the core events the engine makes of cfg's resources.
func configEvents(cfg *clusterconfig.Config) []core.Event {
	limits := func(ls []clusterconfig.CapacityLimit) []core.UnitCount {
		var out []core.UnitCount
		for _, l := range ls {
			out = append(out, core.UnitCount{Unit: l.CapacityUnit, Count: l.MaxCapacity})
		}
		return out
	}
	var evs []core.Event
	for _, se := range cfg.ServiceEnvironments {
		evs = append(evs, core.PutEnv{Name: se.Name, Limits: limits(se.CapacityLimits)})
	}
	for _, q := range cfg.JobQueues {
		evs = append(evs, core.PutQueue{Name: q.Name, Env: q.ServiceEnvironments[0], QuotaShares: true, Priority: q.Priority})
		for _, s := range q.QuotaShares {
			st, err := core.ParseStrategy(s.ResourceSharingConfiguration.Strategy)
			if err != nil {
				panic(err)
			}
			borrow := core.UnlimitedBorrow
			if b := s.ResourceSharingConfiguration.BorrowLimit; b != nil {
				borrow = *b
			}
			evs = append(evs, core.PutShare{Queue: q.Name, Name: s.Name, Limits: limits(s.CapacityLimits), Strategy: st,
				BorrowLimit: borrow, InSharePreemption: s.PreemptionConfiguration.InSharePreemption == "ENABLED", MinRuntime: s.MinimumRuntime()})
		}
	}
	return evs
}
