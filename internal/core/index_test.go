package core_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestJobsByID: through random submissions and terminations, with IDs of
// many lengths and IDs used again after their jobs left, the core finds
// every live job by ID and by the handle it had from the start, finds no
// job that left, and counts the live ones. The table of IDs grows and
// shifts entries back on removal many times over.
func TestJobsByID(t *testing.T) {
	for _, seed := range seeds(20) {
		if msg := jobsByID(seed); msg != "" {
			t.Fatalf("seed %d (replay with -seed %d): %s", seed, seed, msg)
		}
	}
}

func jobsByID(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed^0x1d5))
	c := core.New()
	for _, ev := range []core.Event{
		core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: "u", Count: 1}}},
		core.PutQueue{Name: "q", Env: "se"},
	} {
		if err := c.Apply(ev); err != nil {
			return err.Error()
		}
	}
	live := map[string]core.Handle{}
	var ids []string // live IDs, for picking one at random
	gone := map[string]core.Handle{}
	newID := func(n int) string {
		switch n % 4 {
		case 0:
			return strconv.Itoa(n)
		case 1:
			return "j" + strconv.Itoa(n)
		case 2:
			return fmt.Sprintf("%08x-4c1e-4f2a-9b1d-%012x", n*2654435761, n)
		}
		return fmt.Sprintf("a-rather-long-job-id-%d-of-a-trace", n)
	}
	for n := range 20_000 {
		switch r := rng.IntN(10); {
		case r < 6 || len(ids) == 0: // a new job, or one whose ID was used before
			id := newID(n)
			if r == 0 {
				for old := range gone {
					id = old
					break
				}
			}
			if err := c.Apply(core.Submit{Job: id, Queue: "q", Demand: []core.UnitCount{{Unit: "u", Count: 2}}, PreemptionRetries: -1}); err != nil {
				return fmt.Sprintf("submit %s: %v", id, err)
			}
			delete(gone, id)
			live[id] = c.Handle(id)
			ids = append(ids, id)
		default:
			k := rng.IntN(len(ids))
			id := ids[k]
			ids[k] = ids[len(ids)-1]
			ids = ids[:len(ids)-1]
			if err := c.Apply(core.Terminate{Job: id}); err != nil {
				return fmt.Sprintf("terminate %s: %v", id, err)
			}
			gone[id] = live[id]
			delete(live, id)
		}
		if n%997 != 0 {
			continue
		}
		if c.Len() != len(live) {
			return fmt.Sprintf("after %d events the core holds %d jobs, not %d", n, c.Len(), len(live))
		}
		for id, h := range live {
			if _, ok := c.Job(id); !ok || h == 0 || c.Handle(id) != h {
				return fmt.Sprintf("after %d events live job %s: found %v, handle %x, kept %x", n, id, ok, c.Handle(id), h)
			}
		}
		for id, h := range gone {
			if _, ok := c.Job(id); ok || c.Handle(id) != 0 {
				return fmt.Sprintf("after %d events job %s, which left, is found", n, id)
			}
			// Its handle, kept past its end, names no job, even when its
			// slot holds another now.
			if err := c.Apply(core.AttemptEnded{Handle: h}); !errors.Is(err, core.ErrNotFound) {
				return fmt.Sprintf("after %d events the handle of job %s, which left, gives %v", n, id, err)
			}
		}
	}
	return ""
}
