package core

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Fair-share queues (docs/fair-share.md). A queue whose scheduling policy
// has a fairsharePolicy keeps one share per share identifier, made when
// the identifier's first job arrives. Between identifiers, the head of the
// one with the lowest weighted usage goes first; within one, jobs go by
// schedulingPriority, then queue time. Nothing is preempted.

// DefaultDecaySeconds is the window a shareDecaySeconds of 0 stands for
// (AWS's API reference: "the default minimum time window (600 seconds)").
const DefaultDecaySeconds = 600

// FairShare is a job queue's fair-share policy.
type FairShare struct {
	// DecaySeconds is shareDecaySeconds, 0-604800; 0 means
	// DefaultDecaySeconds.
	DecaySeconds int
	// Reservation is computeReservation, 0-99 percent: of each instance
	// type, floor(limit × (Reservation/100)^active) instances are kept
	// back for share identifiers that have no jobs.
	Reservation int
	// Weights is shareDistribution. An identifier ending in '*' gives the
	// weight of every identifier starting with what precedes it.
	// Identifiers not matched weigh 1.
	Weights []ShareWeight
}

// ShareWeight is one entry of shareDistribution.
type ShareWeight struct {
	Identifier string
	Weight     float64 // weightFactor, 0.0001-999.9999
}

// SetUsage sets a share identifier's decayed usage in a fair-share queue,
// as it stood at At (nanoseconds): the engine rebuilding its core passes
// what the store's attempts add up to. Apply it after the identifier's
// dispatched jobs are restored: from At on, they count as running.
type SetUsage struct {
	Queue string
	Share string
	// Usage is in instance-seconds, decayed (see Core.FairUsage).
	Usage float64
	At    int64
}

func (SetUsage) isEvent() {}

// fairPolicy is a FairShare as the core uses it.
type fairPolicy struct {
	decay       float64 // seconds
	reservation int
	exact       map[string]float64
	prefixes    []ShareWeight // longest prefix first, '*' dropped
}

func compileFair(f *FairShare) (*fairPolicy, error) {
	if f.DecaySeconds < 0 || f.DecaySeconds > 604800 {
		return nil, invalid("shareDecaySeconds %d is outside 0-604800", f.DecaySeconds)
	}
	if f.Reservation < 0 || f.Reservation > 99 {
		return nil, invalid("computeReservation %d is outside 0-99", f.Reservation)
	}
	p := &fairPolicy{decay: float64(f.DecaySeconds), reservation: f.Reservation, exact: map[string]float64{}}
	if f.DecaySeconds == 0 {
		p.decay = DefaultDecaySeconds
	}
	seen := map[string]bool{}
	for _, w := range f.Weights {
		if w.Identifier == "" {
			return nil, invalid("shareDistribution: a shareIdentifier is empty")
		}
		if !(w.Weight >= 0.0001 && w.Weight <= 999.9999) {
			return nil, invalid("shareDistribution: weightFactor %v of %s is outside 0.0001-999.9999", w.Weight, w.Identifier)
		}
		if seen[w.Identifier] {
			return nil, invalid("shareDistribution: shareIdentifier %s is listed twice", w.Identifier)
		}
		seen[w.Identifier] = true
		if prefix, ok := strings.CutSuffix(w.Identifier, "*"); ok {
			p.prefixes = append(p.prefixes, ShareWeight{Identifier: prefix, Weight: w.Weight})
		} else {
			p.exact[w.Identifier] = w.Weight
		}
	}
	slices.SortFunc(p.prefixes, func(a, b ShareWeight) int {
		return cmp.Or(cmp.Compare(len(b.Identifier), len(a.Identifier)), cmp.Compare(a.Identifier, b.Identifier))
	})
	return p, nil
}

// weightOf is an identifier's weightFactor: its own entry, else the
// longest matching prefix entry, else 1.
func (p *fairPolicy) weightOf(id string) float64 {
	if w, ok := p.exact[id]; ok {
		return w
	}
	for _, w := range p.prefixes {
		if strings.HasPrefix(id, w.Identifier) {
			return w.Weight
		}
	}
	return 1
}

// fairQueue is the pool's fair-share queue, or nil: a fair-share queue is
// its service environment's only queue.
func (e *env) fairQueue() *queue {
	if len(e.queues) == 1 && e.queues[0].fair != nil {
		return e.queues[0]
	}
	return nil
}

// Decay adds to usage u (instance-seconds, decayed) dt seconds during
// which n instances were held, with exponential decay of time constant
// window seconds: usage from t seconds ago counts e^(-t/window). Holding n
// instances for long makes the usage n × window, as a sliding window of
// that length would.
func Decay(u float64, n int, dt, window float64) float64 {
	if dt <= 0 {
		return u
	}
	a := math.Exp(-dt / window)
	return u*a + float64(n)*window*(1-a)
}

// accrueFair brings every fair-share identifier's usage to now, counting
// the instances it held since the last cycle.
func (c *Core) accrueFair() {
	c.eachFairShare(func(s *share) {
		if c.now > s.usageAt {
			s.usage = Decay(s.usage, s.held, float64(c.now-s.usageAt)/1e9, s.q.fair.decay)
			s.usageAt = c.now
		}
	})
}

// snapshotFair notes what each identifier holds after a cycle: it holds
// that until the next one.
func (c *Core) snapshotFair() {
	c.eachFairShare(func(s *share) { s.held = s.instances() })
}

// eachFairShare calls fn for every share identifier of every fair-share
// queue; each is independent of the others, so map order does not matter.
func (c *Core) eachFairShare(fn func(*share)) {
	if c.fairQueues == 0 {
		return
	}
	for _, q := range c.queues {
		if q.fair != nil {
			for _, s := range q.shares {
				fn(s)
			}
		}
	}
}

// instances counts the instances (of every type) the share holds.
func (s *share) instances() int {
	n := 0
	for _, u := range s.use {
		n += u
	}
	return n
}

// fairLoad is what an identifier is charged with: its decayed usage as an
// average over the window, plus what it holds now, so that capacity handed
// out at one instant is shared too.
func (s *share) fairLoad() float64 {
	return s.usage/s.q.fair.decay + float64(s.instances())
}

// fairKey orders identifiers: lowest weighted load first (AWS: usage ×
// weightFactor, "the scheduler picks jobs with the lowest usage").
func (s *share) fairKey() float64 { return s.weight * s.fairLoad() }

// active tells whether the identifier has jobs (RUNNABLE or dispatched).
func (s *share) active() bool {
	return s.runnable.Len()+s.infeasible.Len()+s.dispatched.Len() > 0
}

// fairReserve is, per unit, what computeReservation keeps back for
// identifiers not yet active.
func (c *Core) fairReserve(q *queue) []int {
	active := 0
	for _, s := range q.shares {
		if s.active() {
			active++
		}
	}
	e := q.env
	if q.resValid && q.resActive == active && q.resGen == c.reconfigs && len(q.res) == len(e.limit) {
		return q.res
	}
	q.res = q.res[:0]
	for _, l := range e.limit {
		q.res = append(q.res, reserveOf(l, q.fair.reservation, active))
	}
	q.resValid, q.resActive, q.resGen = true, active, c.reconfigs
	return q.res
}

// reserveOf is floor(limit × (pct/100)^active), exactly.
func reserveOf(limit, pct, active int) int {
	if limit <= 0 || pct <= 0 {
		return 0
	}
	n, d := big.NewInt(int64(limit)), big.NewInt(1)
	r, h := big.NewInt(int64(pct)), big.NewInt(100)
	for range active {
		n.Mul(n, r)
		d.Mul(d, h)
		if n.Cmp(d) < 0 {
			return 0
		}
	}
	return int(n.Quo(n, d).Int64())
}

// fairFits: the head fits the SE's free capacity less the reservation.
func (c *Core) fairFits(h *job, res []int) bool {
	e := h.sh.q.env
	for _, d := range h.needs() {
		if e.limit[d.u]-e.use[d.u]-res[d.u] < int(d.n) {
			return false
		}
	}
	return true
}

// fairRound dispatches the head, among those that fit, of the identifier
// with the lowest weighted load (ties: queue time, job ID). A head that
// does not fit does not hold up the other identifiers.
func (c *Core) fairRound(q *queue, out []Decision) ([]Decision, bool) {
	if q.disabled {
		return out, false
	}
	res := c.fairReserve(q)
	var best *job
	var bestKey float64
	for _, s := range q.shares {
		h := s.head()
		if h == nil || h.heldAt == c.instant || !c.fairFits(h, res) {
			continue
		}
		k := s.fairKey()
		if best == nil || k < bestKey || (k == bestKey && fifoCmp(h, best) < 0) {
			best, bestKey = h, k
		}
	}
	if best == nil {
		return out, false
	}
	return c.dispatch(best, ViaIdle, out), true
}

// fairReason tells why head h of a fair-share identifier waits.
func (c *Core) fairReason(h *job) Reason {
	s := h.sh
	e := s.q.env
	for _, d := range h.needs() {
		if e.limit[d.u]-e.use[d.u] < int(d.n) {
			return Reason{Code: ReasonFairCapacity, Share: s.name, Unit: c.units[d.u], Need: int(d.n),
				FairTenths: c.fairTenths(s), Window: int(s.q.fair.decay)}
		}
	}
	res := c.fairReserve(s.q)
	for _, d := range h.needs() {
		if free := e.limit[d.u] - e.use[d.u]; free-res[d.u] < int(d.n) {
			return Reason{Code: ReasonFairReserved, Share: s.name, Unit: c.units[d.u], Need: int(d.n),
				IdleCount: min(free, res[d.u]), Active: s.q.resActive, Limit: s.q.fair.reservation}
		}
	}
	return Reason{Code: ReasonFairCapacity, Share: s.name, FairTenths: -1}
}

// fairTenths is, in tenths, how many times its weighted share of the
// active identifiers' load identifier s carries; -1 when none carries any.
func (c *Core) fairTenths(s *share) int {
	var load, inv float64
	for _, x := range s.q.shares {
		if x.active() {
			load += x.fairLoad()
			inv += 1 / x.weight
		}
	}
	if load <= 0 {
		return -1
	}
	return int(math.Round(10 * (s.fairLoad() / load) / ((1 / s.weight) / inv)))
}

// fairShare finds or makes the share of identifier id in fair-share
// queue q.
func (c *Core) fairShare(q *queue, id string) *share {
	if s := q.share(id); s != nil {
		return s
	}
	s := c.newShare(q, id)
	s.weight = q.fair.weightOf(id)
	s.usageAt = c.now
	i, _ := slices.BinarySearchFunc(q.shares, id, func(x *share, n string) int { return cmp.Compare(x.name, n) })
	q.shares = slices.Insert(q.shares, i, s)
	return s
}

// fairSubmitShare is the share a job of identifier id joins. An
// identifier that becomes active shrinks computeReservation: every head
// of the pool may now fit.
func (c *Core) fairSubmitShare(q *queue, id string) (*share, error) {
	if s := q.share(id); s != nil && s.active() {
		return s, nil
	}
	active := 0
	for _, s := range q.shares {
		if s.active() {
			active++
		}
	}
	if active >= MaxActiveShareIdentifiers {
		return nil, refused(ErrConflict, "job queue %s already has %d active share identifiers; a job of a new one cannot be submitted", q.name, active)
	}
	s := c.fairShare(q, id)
	c.markPool(q.env)
	return s, nil
}

// MaxActiveShareIdentifiers is how many share identifiers may have jobs in
// one fair-share queue at once (AWS: "a maximum of 500 active share
// identifiers. When the limit has been reached, submissions of any jobs
// that add a new share identifier fail").
const MaxActiveShareIdentifiers = 500

func (c *Core) setUsage(ev SetUsage) error {
	q := c.queues[ev.Queue]
	if q == nil {
		return refused(ErrNotFound, "job queue %s", ev.Queue)
	}
	if q.fair == nil {
		return refused(ErrConflict, "job queue %s has no fair-share scheduling policy", q.name)
	}
	if ev.Share == "" {
		return invalid("share identifier is empty")
	}
	if !(ev.Usage >= 0) || math.IsInf(ev.Usage, 0) {
		return invalid("usage %v of share identifier %s is not a finite amount", ev.Usage, ev.Share)
	}
	s := c.fairShare(q, ev.Share)
	s.usage, s.usageAt, s.held = ev.Usage, ev.At, s.instances()
	return nil
}

// FairUsage is a share identifier's standing in a fair-share queue.
type FairUsage struct {
	Share  string
	Weight float64
	// Usage is the decayed instance-seconds as of the last cycle: an
	// instance held t seconds ago counts e^(-t/Window).
	Usage  float64
	Window int   // seconds
	At     int64 // when Usage was last brought up to date (nanoseconds)
	Held   int   // instances held now
	Active bool
}

// FairUsages reports the share identifiers a fair-share queue has seen,
// by name.
func (c *Core) FairUsages(queue string) []FairUsage {
	q := c.queues[queue]
	if q == nil || q.fair == nil {
		return nil
	}
	out := make([]FairUsage, 0, len(q.shares))
	for _, s := range q.shares {
		out = append(out, FairUsage{Share: s.name, Weight: s.weight, Usage: s.usage, Window: int(q.fair.decay), At: s.usageAt, Held: s.instances(), Active: s.active()})
	}
	return out
}

// fairFront is up to n RUNNABLE jobs of fair-share queue q in the order
// the identifiers' loads predict, were capacity no bound: each job taken
// adds its instances to its identifier's load.
func fairFront(q *queue, n int) []string {
	type cursor struct {
		s    *share
		i    int
		j    *job
		load float64
	}
	var cs []*cursor
	for _, s := range q.shares {
		if j := s.runnable.At(0); j != nil {
			cs = append(cs, &cursor{s: s, j: j, load: s.fairLoad()})
		}
	}
	var out []string
	for len(out) < n && len(cs) > 0 {
		best := 0
		for i, x := range cs {
			b := cs[best]
			if k, bk := x.s.weight*x.load, b.s.weight*b.load; k < bk || (k == bk && fifoCmp(x.j, b.j) < 0) {
				best = i
			}
		}
		cur := cs[best]
		out = append(out, cur.j.id)
		for _, d := range cur.j.needs() {
			cur.load += float64(d.n)
		}
		cur.i++
		if cur.j = cur.s.runnable.At(cur.i); cur.j == nil {
			cs = slices.Delete(cs, best, best+1)
		}
	}
	return out
}
