package forecast

import (
	"container/heap"
	"fmt"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// Basis tells what an estimate rests on: the sources of the expected ends
// of the jobs that ended before the start, in the job's service
// environment. It is a set.
type Basis uint8

const (
	// MaxRuntime: the payload's StoppingCondition.MaxRuntimeInSeconds.
	MaxRuntime Basis = 1 << iota
	// TimeLimit: the job's timeoutConfig.attemptDurationSeconds.
	TimeLimit
	// History: the median of the share's recent run times.
	History
	// MinimumRuntime: a running job reaching its share's minimum runtime
	// before preemption, when it may be preempted (sharq's own setting).
	MinimumRuntime
)

var basisNames = []struct {
	b          Basis
	code, text string
}{{MaxRuntime, "MAX_RUNTIME", "max runtime"}, {TimeLimit, "TIME_LIMIT", "time limit"}, {History, "HISTORY", "run time history"},
	{MinimumRuntime, "MINIMUM_RUNTIME", "minimum runtime"}}

// Codes lists the set as API codes: MAX_RUNTIME, TIME_LIMIT, HISTORY.
func (b Basis) Codes() []string {
	out := []string{}
	for _, n := range basisNames {
		if b&n.b != 0 {
			out = append(out, n.code)
		}
	}
	return out
}

func (b Basis) String() string {
	var out []string
	for _, n := range basisNames {
		if b&n.b != 0 {
			out = append(out, n.text)
		}
	}
	return strings.Join(out, " + ")
}

// Kind is what an estimate says.
type Kind uint8

const (
	// Start: the job is expected to start at At.
	Start Kind = iota + 1
	// NotWithin: the job had not started when the run stopped, at At (the
	// horizon, or as far as the run's work allowed).
	NotWithin
	// NoBasis: before the job could start, capacity in its pool is held by
	// jobs whose end nothing tells (no max runtime, time limit or history).
	NoBasis
	// Never: the job cannot start as configured (it can never fit, or its
	// queue or service environment is DISABLED).
	Never
)

func (k Kind) String() string {
	switch k {
	case Start:
		return "ESTIMATED"
	case NotWithin:
		return "NOT_WITHIN"
	case NoBasis:
		return "NO_BASIS"
	case Never:
		return "NEVER"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Estimate is a waiting job's estimated start.
type Estimate struct {
	Kind  Kind
	At    int64 // epoch ms: Start's start, NotWithin's end of the run
	Basis Basis // Start: what it rests on; none when it starts at once
}

// Timing is what is known of how long a job holds capacity.
type Timing struct {
	// End is when a dispatched job is expected to end; zero when unknown.
	// An end already past counts as now.
	End time.Time
	// Runtime is how long the job holds capacity once dispatched (again);
	// 0 when unknown.
	Runtime time.Duration
	// Basis is where End and Runtime come from (one of the constants).
	Basis Basis
}

// Input is what the run starts from, besides the core.
type Input struct {
	Now time.Time
	// Horizon is how far ahead the run looks (> 0).
	Horizon time.Duration
	// MaxDecisions bounds the run's work: it stops after that many of the
	// core's decisions (> 0).
	MaxDecisions int
	// Timing tells what is known of a live job. It is asked only of the
	// jobs the run needs: those holding capacity, and those it dispatches.
	Timing func(job string) Timing
}

// Stop tells why a run stopped.
type Stop uint8

const (
	AllStarted Stop = iota + 1 // every waiting job has a start
	AtHorizon                  // the next end is beyond the horizon
	AtBudget                   // Input.MaxDecisions were made
	NoMoreEnds                 // nothing known ends any more
)

func (s Stop) String() string {
	return [...]string{"", "every waiting job has a start", "horizon reached", "work bound reached", "no known end left"}[s]
}

// Code is the stop as an API code: ALL_STARTED, HORIZON, WORK_BOUND or
// NO_KNOWN_END.
func (s Stop) Code() string {
	return [...]string{"", "ALL_STARTED", "HORIZON", "WORK_BOUND", "NO_KNOWN_END"}[s]
}

// Result is one run's estimates.
type Result struct {
	Now   time.Time // the state's time
	Until time.Time // where the run stopped
	Stop  Stop
	// Next is the first end the run expected after Now (zero: none): the
	// estimates hold until then unless the state changes first.
	Next time.Time
	// Decisions is how many decisions the core made in the run.
	Decisions int
	// Estimates has every waiting job's estimate.
	Estimates map[string]Estimate
}

// heldDelay is when the run steps again after a preemption: the core holds
// a preempted job back until a later instant, and the engine's next cycle
// comes as soon as the victim's stop is reported.
const heldDelay = time.Millisecond

// Run runs c forward from in.Now and estimates when each of its waiting
// jobs starts. It takes c over: c is changed, and is of no use afterwards.
// An error is a refusal by the core, which means a broken invariant.
func Run(c *core.Core, in Input) (*Result, error) {
	if in.Horizon <= 0 || in.MaxDecisions <= 0 || in.Timing == nil {
		return nil, fmt.Errorf("forecast: horizon %v and decision bound %d must be positive, and Timing given", in.Horizon, in.MaxDecisions)
	}
	r := &run{c: c, in: in, now: in.Now.UnixNano(), pools: map[string]*pool{}, queuePool: map[string]*pool{},
		held: map[string]*holding{}, requeued: map[string]Timing{},
		res: &Result{Now: in.Now, Estimates: make(map[string]Estimate, c.Len())}}
	r.horizon = r.now + int64(in.Horizon)
	r.classify()
	if err := r.forward(); err != nil {
		return nil, err
	}
	r.finish()
	return r.res, nil
}

// pool is what the run knows of one service environment's capacity.
type pool struct {
	basis Basis // the bases of the ends so far
	open  int   // dispatched jobs with no known end
}

type run struct {
	c         *core.Core
	in        Input
	res       *Result
	now, t    int64 // ns
	horizon   int64
	pools     map[string]*pool // by service environment
	queuePool map[string]*pool
	ends      endHeap
	seq       uint64
	held      map[string]*holding // the jobs holding capacity (and some that no longer do)
	requeued  map[string]Timing   // jobs preempted in the run, until dispatched again
	waiting   int                 // waiting jobs without an estimate yet
	stop      Stop
	// woken: the step runs at the end of a minimum runtime (the core's
	// NextWake), not at an end; what it dispatches rests on that too.
	woken bool
}

// holding is a job holding capacity in the run, until it ends or is
// stopped (then done).
type holding struct {
	tm   Timing
	end  int64 // ns; 0: no known end
	pool *pool
	done bool
}

// classify takes stock: dispatched jobs get their ends, waiting jobs are
// to be estimated, stuck ones never start.
func (r *run) classify() {
	lastQueue := ""
	r.c.EachJob(func(j core.LiveJob) bool {
		p := r.pools[j.Env]
		if p == nil {
			p = &pool{}
			r.pools[j.Env] = p
		}
		if j.Queue != lastQueue {
			r.queuePool[j.Queue], lastQueue = p, j.Queue
		}
		switch {
		case j.Dispatched:
			tm := r.in.Timing(j.ID)
			end := int64(0)
			if !tm.End.IsZero() {
				end = max(tm.End.UnixNano(), r.now)
				if end > r.now && (r.res.Next.IsZero() || end < r.res.Next.UnixNano()) {
					r.res.Next = time.Unix(0, end)
				}
			}
			r.hold(j.ID, tm, end, p)
		case j.Stuck:
			r.res.Estimates[j.ID] = Estimate{Kind: Never}
		default:
			r.res.Estimates[j.ID] = Estimate{} // to be estimated
			r.waiting++
		}
		return true
	})
}

// forward steps the core at each expected end until every waiting job has
// a start, the horizon, the work bound, or no known end is left.
func (r *run) forward() error {
	r.t = r.now
	for {
		if r.waiting == 0 {
			return r.stopAt(AllStarted, r.t)
		}
		if err := r.endUntil(r.t); err != nil {
			return err
		}
		ds := r.c.Step(time.Unix(0, r.t))
		r.res.Decisions += len(ds.List)
		held := r.apply(ds)
		next, ok := r.nextEnd()
		r.woken = false
		if w, wok := r.c.NextWake(); wok && (!ok || w.UnixNano() < next) {
			// A minimum runtime ends first: the core may preempt then.
			next, ok, r.woken = max(w.UnixNano(), r.t+1), true, true
		}
		if held && (!ok || r.t+int64(heldDelay) < next) {
			next, ok, r.woken = r.t+int64(heldDelay), true, false
		}
		switch {
		case r.waiting == 0:
			continue
		case r.res.Decisions >= r.in.MaxDecisions:
			return r.stopAt(AtBudget, r.t)
		case !ok:
			return r.stopAt(NoMoreEnds, r.t)
		case next > r.horizon:
			return r.stopAt(AtHorizon, r.horizon)
		}
		r.t = next
	}
}

func (r *run) stopAt(s Stop, t int64) error {
	r.stop, r.res.Stop, r.res.Until = s, s, time.Unix(0, t)
	return nil
}

// apply follows one step's decisions; held tells that a job was preempted
// and waits for a later instant.
func (r *run) apply(ds core.Decisions) (held bool) {
	for _, d := range ds.List {
		switch d.Kind {
		case core.Dispatch:
			r.dispatched(d)
		case core.Preempt:
			r.stopped(d)
			held = true
		case core.Fail:
			r.stopped(d)
		}
	}
	return held
}

func (r *run) dispatched(d core.Decision) {
	p := r.queuePool[d.Queue]
	if r.woken && d.Via != core.ViaIdle {
		p.basis |= MinimumRuntime
	}
	var tm Timing
	if e, ok := r.res.Estimates[d.Job]; ok && e.Kind == 0 {
		r.res.Estimates[d.Job] = Estimate{Kind: Start, At: time.Unix(0, r.t).UnixMilli(), Basis: p.basis}
		r.waiting--
		tm = r.in.Timing(d.Job)
	} else {
		tm = r.requeued[d.Job]
		delete(r.requeued, d.Job)
	}
	end := int64(0)
	if tm.Runtime > 0 {
		end = r.t + int64(tm.Runtime)
	}
	r.hold(d.Job, tm, end, p)
}

// hold notes that a job holds capacity until end (0: unknown).
func (r *run) hold(id string, tm Timing, end int64, p *pool) {
	h := &holding{tm: tm, end: end, pool: p}
	r.held[id] = h
	if end == 0 {
		p.open++
		return
	}
	r.seq++
	heap.Push(&r.ends, endAt{at: end, seq: r.seq, job: id, h: h})
}

// stopped forgets a job preempted or failed in the run; one requeued keeps
// its timing for when it is dispatched again.
func (r *run) stopped(d core.Decision) {
	h, ok := r.held[d.Job]
	if !ok || h.done {
		return
	}
	h.done = true // its entry in the heap is skipped
	if h.end == 0 {
		h.pool.open--
	}
	if d.Kind == core.Preempt && d.Requeued {
		r.requeued[d.Job] = h.tm
	}
}

// nextEnd is the time of the first valid end in the heap, dropping stale
// ones.
func (r *run) nextEnd() (int64, bool) {
	for r.ends.Len() > 0 {
		if e := r.ends[0]; !e.h.done {
			return e.at, true
		}
		heap.Pop(&r.ends)
	}
	return 0, false
}

// endUntil ends every job expected to end by t.
func (r *run) endUntil(t int64) error {
	for {
		at, ok := r.nextEnd()
		if !ok || at > t {
			return nil
		}
		e := heap.Pop(&r.ends).(endAt)
		e.h.done = true
		e.h.pool.basis |= e.h.tm.Basis
		if err := r.c.Apply(core.AttemptEnded{Job: e.job}); err != nil {
			return fmt.Errorf("forecast: end job %s: %w", e.job, err)
		}
	}
}

// finish says of each waiting job not reached why.
func (r *run) finish() {
	if r.waiting == 0 {
		return
	}
	open := r.stop == NoMoreEnds
	for _, p := range r.pools {
		open = open || p.open > 0
	}
	if !open { // every job not reached is "not within"
		for id, e := range r.res.Estimates {
			if e.Kind == 0 {
				r.res.Estimates[id] = Estimate{Kind: NotWithin, At: r.res.Until.UnixMilli()}
			}
		}
		return
	}
	r.c.EachJob(func(j core.LiveJob) bool {
		if e, ok := r.res.Estimates[j.ID]; !ok || e.Kind != 0 {
			return true
		}
		e := Estimate{Kind: NotWithin, At: r.res.Until.UnixMilli()}
		if r.stop == NoMoreEnds || r.pools[j.Env].open > 0 {
			e = Estimate{Kind: NoBasis}
		}
		r.res.Estimates[j.ID] = e
		return true
	})
}

// endAt is a job's expected end. Ends are ordered by time, then by when
// they were scheduled, so that equal runs end jobs in the same order.
type endAt struct {
	at  int64
	seq uint64
	job string
	h   *holding
}

type endHeap []endAt

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, k int) bool {
	if h[i].at != h[k].at {
		return h[i].at < h[k].at
	}
	return h[i].seq < h[k].seq
}
func (h endHeap) Swap(i, k int) { h[i], h[k] = h[k], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(endAt)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
