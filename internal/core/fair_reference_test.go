package core_test

import (
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// fairRef is a plain model of one fair-share queue on its service
// environment, written from docs/fair-share.md without the core's data
// structures: every cycle it rescans every job. It shares with the core
// only core.Decay, the arithmetic of decayed usage, so that both compute
// equal loads bit for bit and order ties alike.
type fairRef struct {
	limits      map[string]int
	decay       float64
	reservation int
	weights     []core.ShareWeight
	jobs        []*fairRefJob
	ids         map[string]*fairRefID
	now         int64
}

type fairRefJob struct {
	id, share  string
	demand     map[string]int
	prio       int
	queuedAt   int64
	dispatched bool
}

// fairRefID is a share identifier's decayed usage as of at, and the
// instances it held since.
type fairRefID struct {
	usage float64
	at    int64
	held  int
}

func newFairRef() *fairRef { return &fairRef{ids: map[string]*fairRefID{}} }

func (r *fairRef) setPolicy(f *core.FairShare) {
	r.decay = float64(f.DecaySeconds)
	if f.DecaySeconds == 0 {
		r.decay = core.DefaultDecaySeconds
	}
	r.reservation, r.weights = f.Reservation, f.Weights
}

// weight: the exact entry, else the longest matching prefix entry, else 1.
func (r *fairRef) weight(id string) float64 {
	best, bestLen := 1.0, -1
	for _, w := range r.weights {
		if w.Identifier == id {
			return w.Weight
		}
		if p, ok := strings.CutSuffix(w.Identifier, "*"); ok && strings.HasPrefix(id, p) && len(p) > bestLen {
			best, bestLen = w.Weight, len(p)
		}
	}
	return best
}

func (r *fairRef) id(name string) *fairRefID {
	if r.ids[name] == nil {
		r.ids[name] = &fairRefID{at: r.now}
	}
	return r.ids[name]
}

func (r *fairRef) submit(j *fairRefJob) { r.id(j.share); r.jobs = append(r.jobs, j) }

func (r *fairRef) find(id string) *fairRefJob {
	for _, j := range r.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

func (r *fairRef) remove(id string) {
	r.jobs = slices.DeleteFunc(r.jobs, func(j *fairRefJob) bool { return j.id == id })
}

// held counts the instances an identifier's dispatched jobs hold.
func (r *fairRef) held(share string) int {
	n := 0
	for _, j := range r.jobs {
		if j.share == share && j.dispatched {
			for _, c := range j.demand {
				n += c
			}
		}
	}
	return n
}

func (r *fairRef) used(unit string) int {
	n := 0
	for _, j := range r.jobs {
		if j.dispatched {
			n += j.demand[unit]
		}
	}
	return n
}

// active counts identifiers with live jobs.
func (r *fairRef) active() int {
	seen := map[string]bool{}
	for _, j := range r.jobs {
		seen[j.share] = true
	}
	return len(seen)
}

// reserve is floor(limit × (reservation/100)^active), with exact rationals.
func (r *fairRef) reserve(unit string) int {
	x := new(big.Rat).SetInt64(int64(r.limits[unit]))
	f := big.NewRat(int64(r.reservation), 100)
	for range r.active() {
		x.Mul(x, f)
	}
	return int(new(big.Int).Quo(x.Num(), x.Denom()).Int64())
}

func (r *fairRef) feasible(j *fairRefJob) bool {
	for u, n := range j.demand {
		if n > r.limits[u] {
			return false
		}
	}
	return true
}

// head is an identifier's feasible RUNNABLE job with the highest priority,
// then the earliest queue time, then the lowest ID.
func (r *fairRef) head(share string) *fairRefJob {
	var h *fairRefJob
	for _, j := range r.jobs {
		if j.share != share || j.dispatched || !r.feasible(j) {
			continue
		}
		if h == nil || j.prio > h.prio || (j.prio == h.prio && (j.queuedAt < h.queuedAt || (j.queuedAt == h.queuedAt && j.id < h.id))) {
			h = j
		}
	}
	return h
}

func (r *fairRef) fits(j *fairRefJob) bool {
	for u, n := range j.demand {
		if r.limits[u]-r.used(u)-r.reserve(u) < n {
			return false
		}
	}
	return true
}

// step runs one cycle at now and returns the IDs dispatched, in order.
func (r *fairRef) step(now time.Time, open bool) []string {
	r.now = now.UnixNano()
	for _, u := range r.ids {
		if r.now > u.at {
			u.usage = core.Decay(u.usage, u.held, float64(r.now-u.at)/1e9, r.decay)
			u.at = r.now
		}
	}
	var out []string
	for open {
		var best *fairRefJob
		var bestKey float64
		for name := range r.ids {
			h := r.head(name)
			if h == nil || !r.fits(h) {
				continue
			}
			k := r.weight(name) * (r.ids[name].usage/r.decay + float64(r.held(name)))
			if best == nil || k < bestKey || (k == bestKey && (h.queuedAt < best.queuedAt || (h.queuedAt == best.queuedAt && h.id < best.id))) {
				best, bestKey = h, k
			}
		}
		if best == nil {
			break
		}
		best.dispatched = true
		out = append(out, best.id)
	}
	for name, u := range r.ids {
		u.held = r.held(name)
	}
	return out
}
