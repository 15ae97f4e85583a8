package core_test

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "replay one random sequence of the property and differential tests")
	sequencesFlag = flag.Int("sequences", 0, "how many random sequences the property and differential tests run (0: their defaults)")
	stepsFlag     = flag.Int("steps", 0, "how many steps each random sequence has (0: the tests' defaults)")
)

// stepsOr returns the steps per sequence: -steps when set, else n.
func stepsOr(n int) int {
	if *stepsFlag > 0 {
		return *stepsFlag
	}
	return n
}

// forSeeds runs fn for every seed, spread over GOMAXPROCS goroutines (the
// sequences share nothing), and returns the smallest seed for which fn
// reported a problem, or 0.
func forSeeds(ss []uint64, fn func(seed uint64) bool) uint64 {
	var (
		mu     sync.Mutex
		failed uint64
		next   atomic.Int64
		wg     sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ss) {
					return
				}
				if !fn(ss[i]) {
					mu.Lock()
					if failed == 0 || ss[i] < failed {
						failed = ss[i]
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// seeds returns the seeds a random test runs: the one given by -seed, or
// 1..n (n from -sequences when set).
func seeds(n int) []uint64 {
	if *seedFlag != 0 {
		return []uint64{*seedFlag}
	}
	if *sequencesFlag > 0 {
		n = *sequencesFlag
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// t0 is when every random sequence starts; step k runs at t0 + k seconds.
var t0 = time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)

const (
	genEnv   = "se"
	genQueue = "q"
	genFIFO  = "fifo"
)

// gen produces one random event sequence over a small configuration: 1-3
// units, 1-4 quota shares with random strategies, limits, borrow limits
// and in-share preemption, an SE whose limits are sometimes above and
// sometimes below the sum of the share limits, and sometimes a second SE
// with one or two FIFO queues. It reacts to decisions as an engine would:
// only jobs it saw dispatched end their attempts.
type gen struct {
	rng    *rand.Rand
	step   int
	secs   int // the instant of the step, in seconds after t0
	units  []string
	envLim map[string]int
	envOff bool
	qOff   bool
	shares map[string]*core.PutShare
	fifo   []string // FIFO queue names; empty when there is no FIFO SE
	fifoQ  map[string]*core.PutQueue
	nextID int
	// Job IDs are nextID·idMul + idAdd mod 1000: a permutation, so that
	// they do not follow submission order.
	idMul, idAdd int

	// minRng draws the shares' minimum runtimes, apart from rng so that a
	// sequence without them (odd seeds) is the one it was before they
	// existed; even seeds give shares minimums of 0-5 s (steps are 1 s
	// apart).
	minRng *rand.Rand
	minOn  bool

	live       map[string]bool // submitted and not ended
	dispatched map[string]bool
	home       map[string][2]string // a live job's queue and share
}

func newGen(seed uint64) *gen {
	g := &gen{
		rng:    rand.New(rand.NewPCG(seed, seed^0x5eed)),
		envLim: map[string]int{}, shares: map[string]*core.PutShare{}, fifoQ: map[string]*core.PutQueue{},
		live: map[string]bool{}, dispatched: map[string]bool{}, home: map[string][2]string{},
	}
	g.minRng, g.minOn = rand.New(rand.NewPCG(seed^0x3141, seed)), seed%2 == 0
	g.idMul = []int{3, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43}[g.rng.IntN(12)] // coprime with 1000
	g.idAdd = g.rng.IntN(1000)
	return g
}

func (g *gen) now() time.Time { return t0.Add(time.Duration(g.secs) * time.Second) }

func (g *gen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// setup returns the events that build the configuration.
func (g *gen) setup() []core.Event {
	for i := range 1 + g.rng.IntN(3) {
		g.units = append(g.units, fmt.Sprintf("u%d", i+1))
	}
	sum := map[string]int{}
	for i := range 1 + g.rng.IntN(4) {
		s := g.newShare(fmt.Sprintf("S%d", i+1))
		for _, l := range s.Limits {
			sum[l.Unit] += l.Count
		}
	}
	for _, u := range g.units {
		if g.rng.IntN(20) > 0 { // now and then the SE has no limit for a unit
			g.envLim[u] = max(0, sum[u]+[]int{-2, -1, 0, 1, 1, 2, 3}[g.rng.IntN(7)])
		}
	}
	evs := []core.Event{g.putEnv(), core.PutQueue{Name: genQueue, Env: genEnv, QuotaShares: true, Priority: 1}}
	for _, n := range sortedKeys(g.shares) {
		evs = append(evs, *g.shares[n])
	}
	if g.rng.IntN(10) < 3 {
		lim := make([]core.UnitCount, len(g.units))
		for i, u := range g.units {
			lim[i] = core.UnitCount{Unit: u, Count: 1 + g.rng.IntN(4)}
		}
		evs = append(evs, core.PutEnv{Name: genFIFO, Limits: lim})
		for i := range 1 + g.rng.IntN(2) {
			q := &core.PutQueue{Name: fmt.Sprintf("f%d", i+1), Env: genFIFO, Priority: g.rng.IntN(3)}
			g.fifo = append(g.fifo, q.Name)
			g.fifoQ[q.Name] = q
			evs = append(evs, *q)
		}
	}
	return evs
}

func (g *gen) putEnv() core.PutEnv {
	var lim []core.UnitCount
	for _, u := range sortedKeys(g.envLim) {
		lim = append(lim, core.UnitCount{Unit: u, Count: g.envLim[u]})
	}
	return core.PutEnv{Name: genEnv, Limits: lim, Disabled: g.envOff}
}

func (g *gen) newShare(name string) *core.PutShare {
	s := &core.PutShare{Queue: genQueue, Name: name, InSharePreemption: g.rng.IntN(2) == 0}
	s.Strategy = []core.Strategy{core.Reserve, core.Lend, core.LendAndBorrow}[g.rng.IntN(3)]
	s.Limits = g.limits()
	s.BorrowLimit = g.borrowLimit(s.Strategy)
	s.MinRuntime = g.minRuntime()
	g.shares[name] = s
	return s
}

// minRuntime draws a share's minimum runtime before preemption: none on
// odd seeds, else mostly a few seconds.
func (g *gen) minRuntime() time.Duration {
	if !g.minOn {
		return 0
	}
	return []time.Duration{0, 0, time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 1500 * time.Millisecond}[g.minRng.IntN(7)]
}

// limits returns a share's limits: mostly 1-3 of each unit, sometimes 0
// or no limit at all for a unit.
func (g *gen) limits() []core.UnitCount {
	var lim []core.UnitCount
	for _, u := range g.units {
		switch p := g.rng.IntN(20); {
		case p < 3:
		case p < 5:
			lim = append(lim, core.UnitCount{Unit: u, Count: 0})
		default:
			lim = append(lim, core.UnitCount{Unit: u, Count: 1 + g.rng.IntN(3)})
		}
	}
	return lim
}

// count returns how many instances of a unit a job asks for.
func (g *gen) count() int { return []int{1, 1, 1, 2, 2, 3}[g.rng.IntN(6)] }

func (g *gen) borrowLimit(st core.Strategy) int {
	if st != core.LendAndBorrow {
		return core.UnlimitedBorrow
	}
	return []int{core.UnlimitedBorrow, 0, 50, 100, 200}[g.rng.IntN(5)]
}

// events returns the events of the next step: one to three changes. One
// step in eight comes at the same instant as the one before, as changes
// that an executor reports at once do: a job preempted at that instant
// must stay held back.
func (g *gen) events() []core.Event {
	g.step++
	if g.step == 1 || g.rng.IntN(8) > 0 {
		g.secs++
	}
	var evs []core.Event
	for range 1 + g.rng.IntN(3) {
		p := g.rng.IntN(100)
		switch {
		case p < 45:
			evs = append(evs, g.submit())
		case p < 55 && len(g.live) > 0:
			evs = append(evs, core.SetPriority{Job: g.pick(sortedKeys(g.live)), Priority: g.rng.IntN(5)})
		case p < 72 && len(g.dispatched) > 0:
			evs = append(evs, core.AttemptEnded{Job: g.pick(sortedKeys(g.dispatched)), Requeue: g.rng.IntN(10) < 3})
		case p < 78 && len(g.live) > 0:
			evs = append(evs, core.Terminate{Job: g.pick(sortedKeys(g.live))})
		case p < 90:
			evs = append(evs, g.configChange())
		case p < 95:
			evs = append(evs, g.badEvent())
		default:
			evs = append(evs, g.submit())
		}
	}
	return evs
}

func (g *gen) jobID() string {
	id := fmt.Sprintf("j%03d", (g.nextID*g.idMul+g.idAdd)%1000)
	g.nextID++
	return id
}

func (g *gen) submit() core.Event {
	ev := core.Submit{Job: g.jobID(), Queue: genQueue, Priority: g.rng.IntN(4), PreemptionRetries: -1}
	u, n := g.pick(g.units), g.count()
	if len(g.fifo) > 0 && g.rng.IntN(5) == 0 {
		ev.Queue = g.pick(g.fifo)
	} else {
		ev.Share = g.pick(sortedKeys(g.shares))
		// Mostly a job the share could run: a unit it has a limit for, at
		// most that many (and, if it borrows, now and then more).
		var own []core.UnitCount
		for _, l := range g.shares[ev.Share].Limits {
			if l.Count > 0 {
				own = append(own, l)
			}
		}
		if len(own) > 0 && g.rng.IntN(10) < 8 {
			l := own[g.rng.IntN(len(own))]
			u, n = l.Unit, 1+g.rng.IntN(l.Count)
			if g.shares[ev.Share].Strategy == core.LendAndBorrow && g.rng.IntN(3) == 0 {
				n += 1 + g.rng.IntN(2)
			}
		}
	}
	if g.rng.IntN(10) > 0 && ev.Share != "" {
		n = max(1, min(n, g.envLim[u])) // mostly within what the SE has
	}
	ev.Demand = []core.UnitCount{{Unit: u, Count: n}}
	switch p := g.rng.IntN(20); {
	case p < 5 && len(g.units) > 1:
		// A heterogeneous job: two instance groups of different types,
		// mostly one its share has a limit for.
		others := slices.DeleteFunc(slices.Clone(g.units), func(x string) bool { return x == u })
		v := g.pick(others)
		if sh := g.shares[ev.Share]; sh != nil && g.rng.IntN(10) < 8 {
			for _, l := range sh.Limits {
				if l.Unit != u && l.Count > 0 {
					v = l.Unit
				}
			}
		}
		ev.Demand = append(ev.Demand, core.UnitCount{Unit: v, Count: 1 + g.rng.IntN(2)})
	case p == 5:
		// Two instance groups of one type add up.
		ev.Demand = append(ev.Demand, core.UnitCount{Unit: u, Count: 1})
	}
	// Jobs submitted together share a queue time (the job ID decides); some
	// carry an older one, as a rebuilt or migrated job would.
	ev.QueuedAt = g.now().UnixNano()
	if g.rng.IntN(5) == 0 {
		ev.QueuedAt -= int64(g.rng.IntN(5)) * int64(time.Second)
	}
	if g.rng.IntN(5) < 2 {
		ev.PreemptionRetries = g.rng.IntN(3)
	}
	return ev
}

// configChange changes one thing of the configuration. What it disables
// it soon enables again, so that most events are not refused.
func (g *gen) configChange() core.Event {
	names := sortedKeys(g.shares)
	s := g.shares[g.pick(names)]
	if g.rng.IntN(3) > 0 {
		switch {
		case g.envOff:
			g.envOff = false
			return g.putEnv()
		case g.qOff:
			g.qOff = false
			return core.PutQueue{Name: genQueue, Env: genEnv, QuotaShares: true, Priority: 1}
		}
		for _, n := range names {
			if g.shares[n].Disabled && g.rng.IntN(2) == 0 {
				g.shares[n].Disabled = false
				return *g.shares[n]
			}
		}
	}
	switch p := g.rng.IntN(100); {
	case p < 12:
		s.Limits = g.limits()
	case p < 20:
		s.Strategy = []core.Strategy{core.Reserve, core.Lend, core.LendAndBorrow}[g.rng.IntN(3)]
		s.BorrowLimit = g.borrowLimit(s.Strategy)
	case p < 28:
		s.BorrowLimit = g.borrowLimit(s.Strategy)
	case p < 34:
		s.InSharePreemption = !s.InSharePreemption
	case p < 44:
		s.Disabled = !s.Disabled
	case p < 58:
		// A new SE limit for one unit, again around the sum of the share
		// limits.
		u, sum := g.pick(g.units), 0
		for _, sh := range g.shares {
			for _, l := range sh.Limits {
				if l.Unit == u {
					sum += l.Count
				}
			}
		}
		g.envLim[u] = max(0, sum+[]int{-2, -1, 0, 1, 1, 2, 3}[g.rng.IntN(7)])
		return g.putEnv()
	case p < 64:
		g.envOff = !g.envOff
		return g.putEnv()
	case p < 70:
		g.qOff = !g.qOff
		return core.PutQueue{Name: genQueue, Env: genEnv, QuotaShares: true, Priority: 1, Disabled: g.qOff}
	case p < 80:
		// Deleting an ENABLED share is refused; a DISABLED one goes with
		// its jobs.
		if len(names) > 1 {
			if s.Disabled {
				delete(g.shares, s.Name)
			}
			return core.DeleteShare{Queue: genQueue, Name: s.Name}
		}
	case p < 88:
		if len(names) < 4 {
			for i := 1; ; i++ {
				if n := fmt.Sprintf("S%d", i); g.shares[n] == nil {
					return *g.newShare(n)
				}
			}
		}
	default:
		if len(g.fifo) > 0 {
			q := g.fifoQ[g.pick(g.fifo)]
			// (FIFO queues have no shares and so no minimum runtime.)
			switch p := g.rng.IntN(10); {
			case p < 2 && q.Disabled && len(g.fifo) > 1:
				// A DISABLED FIFO queue is deleted with its jobs.
				g.fifo = slices.DeleteFunc(g.fifo, func(n string) bool { return n == q.Name })
				delete(g.fifoQ, q.Name)
				return core.DeleteQueue{Name: q.Name}
			case p < 4:
				lim := make([]core.UnitCount, len(g.units))
				for i, u := range g.units {
					lim[i] = core.UnitCount{Unit: u, Count: g.rng.IntN(5)}
				}
				return core.PutEnv{Name: genFIFO, Limits: lim}
			case p < 7:
				q.Disabled = !q.Disabled
			default:
				q.Priority = g.rng.IntN(3)
			}
			return *q
		}
	}
	if g.minOn && g.minRng.IntN(3) == 0 {
		s.MinRuntime = g.minRuntime()
	}
	return *s
}

// badEvent returns an event the core must refuse.
func (g *gen) badEvent() core.Event {
	live := sortedKeys(g.live)
	share := g.pick(sortedKeys(g.shares))
	unit := []core.UnitCount{{Unit: g.pick(g.units), Count: 1}}
	switch g.rng.IntN(9) {
	case 0:
		return core.Submit{Job: g.jobID(), Queue: genQueue, Share: "nope", Demand: unit, PreemptionRetries: -1}
	case 1:
		if len(live) > 0 {
			return core.Submit{Job: g.pick(live), Queue: genQueue, Share: share, Demand: unit, PreemptionRetries: -1}
		}
		return core.Submit{Job: "", Queue: genQueue, Share: share, Demand: unit, PreemptionRetries: -1}
	case 2:
		return core.Submit{Job: g.jobID(), Queue: genQueue, Share: share, Demand: []core.UnitCount{{Unit: g.pick(g.units), Count: -1}}, PreemptionRetries: -1}
	case 3:
		return core.Submit{Job: g.jobID(), Queue: genQueue, Share: share, PreemptionRetries: -1}
	case 4:
		return core.Submit{Job: g.jobID(), Queue: genQueue, Share: share, Demand: unit, Priority: core.MaxPriority + 1 + g.rng.IntN(3), PreemptionRetries: -1}
	case 5:
		if len(live) > 0 {
			return core.SetPriority{Job: g.pick(live), Priority: -1 - g.rng.IntN(3)}
		}
		return core.SetPriority{Job: "ghost", Priority: 1}
	case 6:
		return core.Terminate{Job: "ghost"}
	case 7:
		// Ending the attempt of a job that is not dispatched.
		for _, id := range live {
			if !g.dispatched[id] {
				return core.AttemptEnded{Job: id}
			}
		}
		return core.AttemptEnded{Job: "ghost"}
	}
	if g.minOn && g.minRng.IntN(2) == 0 {
		return core.PutShare{Queue: genQueue, Name: share, Limits: []core.UnitCount{{Unit: g.pick(g.units), Count: 1}}, Strategy: core.Lend, MinRuntime: -time.Second}
	}
	return core.PutShare{Queue: genQueue, Name: share, Limits: []core.UnitCount{{Unit: g.pick(g.units), Count: -2}}, Strategy: core.Lend}
}

// observeEvent records an accepted event.
func (g *gen) observeEvent(ev core.Event) {
	switch e := ev.(type) {
	case core.Submit:
		g.live[e.Job] = true
		g.home[e.Job] = [2]string{e.Queue, e.Share}
	case core.DeleteShare:
		g.forget(func(h [2]string) bool { return h == [2]string{e.Queue, e.Name} })
	case core.DeleteQueue:
		g.forget(func(h [2]string) bool { return h[0] == e.Name })
	case core.Terminate:
		delete(g.live, e.Job)
		delete(g.dispatched, e.Job)
	case core.AttemptEnded:
		delete(g.dispatched, e.Job)
		if !e.Requeue {
			delete(g.live, e.Job)
		}
	}
}

// forget drops the jobs whose queue and share match: a deletion removes
// them at once (their failures are reported by the next step).
func (g *gen) forget(match func([2]string) bool) {
	for _, id := range sortedKeys(g.home) {
		if match(g.home[id]) {
			delete(g.live, id)
			delete(g.dispatched, id)
			delete(g.home, id)
		}
	}
}

// observe records what a step decided.
func (g *gen) observe(ds core.Decisions) {
	for _, d := range ds.List {
		switch d.Kind {
		case core.Dispatch:
			g.dispatched[d.Job] = true
		case core.Preempt:
			delete(g.dispatched, d.Job)
		case core.Fail:
			delete(g.live, d.Job)
			delete(g.dispatched, d.Job)
		}
	}
}

// transcript is the readable log of a sequence, printed when it fails. It
// records only when on: a failing sequence is run again to print it.
type transcript struct {
	on bool
	b  strings.Builder
}

func (t *transcript) event(ev core.Event, err error) {
	if !t.on {
		return
	}
	fmt.Fprintf(&t.b, "  %T%+v", ev, ev)
	if err != nil {
		fmt.Fprintf(&t.b, " -> %v", err)
	}
	t.b.WriteByte('\n')
}

func (t *transcript) step(i int, ds core.Decisions) {
	if !t.on {
		return
	}
	fmt.Fprintf(&t.b, "step %d\n", i)
	for _, line := range strings.Split(strings.TrimSuffix(ds.String(), "\n"), "\n") {
		if line != "" {
			fmt.Fprintf(&t.b, "    %s\n", line)
		}
	}
}

func (t *transcript) String() string { return t.b.String() }
