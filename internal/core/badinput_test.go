package core_test

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestBadInputChangesNothing applies random malformed events to cores in
// random states. Each must be refused with an error, without a panic, and
// leave the core as it was: the same answers to every query, and the same
// decisions from then on as a twin core that never saw it.
func TestBadInputChangesNothing(t *testing.T) {
	for _, seed := range seeds(200) {
		if msg := badInput(seed); msg != "" {
			t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, msg)
		}
	}
}

func badInput(seed uint64) (msg string) {
	g := newGen(seed)
	c, twin := core.New(), core.New()
	rng := rand.New(rand.NewPCG(seed, 0xbad))
	defer func() {
		if p := recover(); p != nil {
			msg = fmt.Sprintf("panic: %v", p)
		}
	}()
	both := func(ev core.Event) {
		if c.Apply(ev) == nil {
			g.observeEvent(ev)
		}
		_ = twin.Apply(ev)
	}
	for _, ev := range g.setup() {
		both(ev)
	}
	for i := 1; i <= 20; i++ {
		for _, ev := range g.events() {
			both(ev)
		}
		for range 1 + rng.IntN(4) {
			ev := malformed(rng, g)
			before := snapshot(c, g)
			if err := c.Apply(ev); err == nil {
				return fmt.Sprintf("step %d: %T%+v was accepted", i, ev, ev)
			}
			if after := snapshot(c, g); !reflect.DeepEqual(before, after) {
				return fmt.Sprintf("step %d: %T%+v changed the state (-before +after):\n%s", i, ev, ev, cmp.Diff(before, after))
			}
		}
		got, want := c.Step(g.now()), twin.Step(g.now())
		if got.String() != want.String() {
			return fmt.Sprintf("step %d: after refused events the core decided\n%s\nthe twin\n%s", i, got, want)
		}
		g.observe(got)
	}
	return ""
}

// malformed returns an event the core must refuse, built around the
// current state so that it is wrong in one way only.
func malformed(rng *rand.Rand, g *gen) core.Event {
	live := sortedKeys(g.live)
	job := "ghost"
	if len(live) > 0 {
		job = live[rng.IntN(len(live))]
	}
	share := g.pick(sortedKeys(g.shares))
	unit := g.pick(g.units)
	ok := []core.UnitCount{{Unit: unit, Count: 1}}
	submit := func(mod func(*core.Submit)) core.Event {
		ev := core.Submit{Job: fmt.Sprintf("new%d", rng.IntN(1e6)), Queue: genQueue, Share: share, Demand: ok, PreemptionRetries: -1}
		mod(&ev)
		return ev
	}
	bad := []func() core.Event{
		func() core.Event { return submit(func(e *core.Submit) { e.Share = "unknown" }) },
		func() core.Event { return submit(func(e *core.Submit) { e.Share = "" }) },
		func() core.Event { return submit(func(e *core.Submit) { e.Queue = "unknown" }) },
		func() core.Event { return submit(func(e *core.Submit) { e.Job = "" }) },
		func() core.Event {
			if len(live) == 0 {
				return submit(func(e *core.Submit) { e.Job = "" })
			}
			return submit(func(e *core.Submit) { e.Job = job }) // duplicate
		},
		func() core.Event { return submit(func(e *core.Submit) { e.Demand = nil }) },
		func() core.Event {
			return submit(func(e *core.Submit) { e.Demand = []core.UnitCount{{Unit: unit, Count: -rng.IntN(3)}} })
		},
		func() core.Event {
			return submit(func(e *core.Submit) { e.Demand = []core.UnitCount{{Unit: "", Count: 1}} })
		},
		func() core.Event {
			// A valid new unit first, then a bad count: nothing of it may stick.
			return submit(func(e *core.Submit) {
				e.Demand = []core.UnitCount{{Unit: "brand-new", Count: 1}, {Unit: unit, Count: 0}}
			})
		},
		func() core.Event { return submit(func(e *core.Submit) { e.Priority = -1 - rng.IntN(5) }) },
		func() core.Event {
			return submit(func(e *core.Submit) { e.Priority = core.MaxPriority + 1 + rng.IntN(5) })
		},
		func() core.Event { return submit(func(e *core.Submit) { e.PreemptionRetries = -2 - rng.IntN(3) }) },
		func() core.Event { return core.SetPriority{Job: "unknown", Priority: 1} },
		func() core.Event { return core.SetPriority{Job: job, Priority: core.MaxPriority + 1} },
		func() core.Event { return core.SetPriority{Job: job, Priority: -1} },
		func() core.Event { return core.Terminate{Job: "unknown"} },
		func() core.Event { return core.AttemptEnded{Job: "unknown", Requeue: rng.IntN(2) == 0} },
		func() core.Event {
			for _, id := range live {
				if !g.dispatched[id] {
					return core.AttemptEnded{Job: id} // not dispatched
				}
			}
			return core.AttemptEnded{Job: "unknown"}
		},
		func() core.Event {
			return core.PutShare{Queue: genQueue, Name: share, Limits: []core.UnitCount{{Unit: unit, Count: -1}}, Strategy: core.Lend}
		},
		func() core.Event {
			return core.PutShare{Queue: genQueue, Name: share, Limits: []core.UnitCount{{Unit: unit, Count: 1}, {Unit: unit, Count: 2}}, Strategy: core.Lend}
		},
		func() core.Event { return core.PutShare{Queue: genQueue, Name: share, Limits: ok, Strategy: 0} },
		func() core.Event {
			return core.PutShare{Queue: genQueue, Name: share, Limits: ok, Strategy: core.LendAndBorrow, BorrowLimit: -2}
		},
		func() core.Event {
			return core.PutShare{Queue: "unknown", Name: share, Limits: ok, Strategy: core.Lend}
		},
		func() core.Event { return core.PutShare{Queue: genQueue, Name: "", Limits: ok, Strategy: core.Lend} },
		func() core.Event { return core.PutEnv{Name: genEnv, Limits: []core.UnitCount{{Unit: unit, Count: -5}}} },
		func() core.Event { return core.PutEnv{Name: ""} },
		func() core.Event { return core.PutQueue{Name: genQueue, Env: "unknown", QuotaShares: true} },
		func() core.Event { return core.PutQueue{Name: genQueue, Env: genEnv} }, // switch to FIFO
		func() core.Event { return core.PutQueue{Name: "second", Env: genEnv} }, // beside a quota queue
		func() core.Event { return core.DeleteEnv{Name: genEnv} },               // still used
		func() core.Event { return core.DeleteEnv{Name: "unknown"} },
		func() core.Event { return core.DeleteQueue{Name: "unknown"} },
		func() core.Event {
			if g.qOff {
				return core.DeleteQueue{Name: "unknown"}
			}
			return core.DeleteQueue{Name: genQueue} // ENABLED
		},
		func() core.Event {
			if g.shares[share].Disabled {
				return core.DeleteShare{Queue: genQueue, Name: "unknown"}
			}
			return core.DeleteShare{Queue: genQueue, Name: share} // ENABLED
		},
		func() core.Event { return nil },
	}
	return bad[rng.IntN(len(bad))]()
}

// state is what the core answers about everything the test knows of.
type state struct {
	Jobs   map[string]string
	Usage  map[string][]core.ShareUsage
	Fronts map[string][]string
	Env    []core.UnitUsage
	Len    int
}

func snapshot(c *core.Core, g *gen) state {
	st := state{Jobs: map[string]string{}, Usage: map[string][]core.ShareUsage{}, Fronts: map[string][]string{},
		Env: c.EnvUsage(genEnv), Len: c.Len()}
	for _, id := range sortedKeys(g.live) {
		js, ok := c.Job(id)
		st.Jobs[id] = fmt.Sprintf("%v %+v", ok, js)
	}
	for _, q := range append([]string{genQueue}, g.fifo...) {
		st.Usage[q] = c.Usage(q)
		st.Fronts[q] = c.QueueFront(q, 1000)
		for _, s := range sortedKeys(g.shares) {
			st.Fronts[q+"/"+s] = c.ShareFront(q, s, 1000)
		}
	}
	return st
}

// TestStandardLibraryOnly: the core may import nothing but the standard
// library (design/style.md), test dependencies aside.
func TestStandardLibraryOnly(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goTool = p
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/sharq-dev/sharq/internal/core" {
			deps = append(deps, p)
		}
	}
	if len(deps) > 0 {
		t.Errorf("internal/core imports beyond the standard library: %v", deps)
	}
}
