package sim

import (
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/jobevents"
)

// Job phases as the collector tracks them.
const (
	phaseNone uint8 = iota
	phaseWaiting
	phaseDispatched
	phaseEnded
)

// jobStat is what the collector knows of one job.
type jobStat struct {
	phase      uint8
	dispatched bool // at least once
	pool       *pool
	share      *poolShare
	// more are the pools of a job's instance groups after its first.
	more []groupStat
	// waitFrom is when the job's current wait began: its submission or
	// its last requeue; waited sums its waits that a dispatch ended.
	waitFrom, waited time.Duration
}

// groupStat is where one more instance group's capacity counts.
type groupStat struct {
	pool  *pool
	share *poolShare
	count int
}

// collector hears every committed cycle of the engine and keeps the
// figures of the report.
type collector struct {
	s     *Sim
	pools []*pool
	ts    *timeSeries
	jobs  []jobStat
	// firstWaits and requeuedWaits are each wait that a dispatch ended, in
	// seconds: the first of each job, and those after a requeue.
	firstWaits, requeuedWaits []float64
	counts                    map[string]int // jobs by outcome
	first                     time.Duration  // first submission
	last                      time.Duration  // last job end
	line                      []TimelineEntry
	usage                     usageLog
}

func newCollector(s *Sim) *collector {
	c := &collector{s: s, pools: newPools(s.cfg), jobs: make([]jobStat, len(s.w.Jobs)), counts: map[string]int{}}
	horizon := time.Second
	if n := len(s.w.Jobs); n > 0 {
		c.first = s.w.Jobs[0].At
		horizon = max(horizon, s.w.Jobs[n-1].At+s.w.Jobs[n-1].Runtime)
	}
	c.ts = newTimeSeries(horizon, s.opts.Buckets)
	c.firstWaits = make([]float64, 0, len(s.w.Jobs))
	c.addIdentifiers()
	for i := range s.w.Jobs {
		j := &s.w.Jobs[i]
		c.jobs[i].pool, c.jobs[i].share = c.find(j.Queue, j.Share, j.InstanceType)
		for _, g := range j.Groups[min(1, len(j.Groups)):] {
			p, sh := c.find(j.Queue, j.Share, g.Type)
			c.jobs[i].more = append(c.jobs[i].more, groupStat{p, sh, g.Count})
		}
	}
	return c
}

// find returns the pool and share capacity of unit counts against.
func (c *collector) find(queue, share, unit string) (*pool, *poolShare) {
	for _, p := range c.pools {
		if p.queue == queue && p.unit == unit {
			return p, p.share(share)
		}
	}
	return nil, nil
}

func (c *collector) submitted(i int32) {
	c.jobs[i].phase = phaseWaiting
	c.jobs[i].waitFrom = c.s.now
}

func (c *collector) rejected(i int32, reason string) {
	c.jobs[i].phase = phaseEnded
	c.counts["rejected"]++
	c.timeline(i, "rejected", reason)
}

// Transitions follows each job's status changes: the collector is the
// engine's sink. The k-th dispatch of a cycle is the k-th job that entered
// SCHEDULED in it.
func (c *collector) Transitions(ts []jobevents.Transition, dispatches []jobevents.Dispatch, preempts []jobevents.Preempt) {
	d := 0
	for k := range ts {
		t := &ts[k]
		i, ok := c.s.live[t.JobID]
		if !ok {
			continue
		}
		var di *jobevents.Dispatch
		if t.Status == engine.StatusScheduled && d < len(dispatches) {
			di = &dispatches[d]
			d++
		}
		c.transition(i, t, di)
	}
}

func (c *collector) transition(i int32, t *jobevents.Transition, di *jobevents.Dispatch) {
	st := &c.jobs[i]
	was := st.phase
	switch t.Status {
	case engine.StatusScheduled:
		st.phase = phaseDispatched
		if was != phaseDispatched {
			c.useJob(i, 1)
			c.dispatched(i, di)
		}
	case engine.StatusRunnable:
		st.phase = phaseWaiting
		if was == phaseDispatched {
			st.waitFrom = c.s.now
			c.useJob(i, -1)
			c.preempted(i, t.Reason)
		}
	case engine.StatusSucceeded, engine.StatusFailed:
		st.phase = phaseEnded
		if was == phaseDispatched {
			c.useJob(i, -1)
		}
		c.ended(i, t)
	}
}

// use changes a share's instances in use, integrating what went before.
// useJob counts job i's instances in (sign 1) or out (-1), each group's
// in its own pool.
func (c *collector) useJob(i int32, sign int) {
	st := &c.jobs[i]
	c.use(st.pool, st.share, sign*c.s.w.Jobs[i].Count)
	for _, g := range st.more {
		c.use(g.pool, g.share, sign*g.count)
	}
}

func (c *collector) use(p *pool, sh *poolShare, delta int) {
	if p == nil || sh == nil {
		return
	}
	p.flush(c.s.now, c.ts)
	sh.use += delta
}

func (c *collector) dispatched(i int32, di *jobevents.Dispatch) {
	st := &c.jobs[i]
	how := "own"
	if di != nil && di.Borrowed {
		how = "borrowed"
	}
	if di != nil && di.Via != "idle" {
		how += ", " + di.Via
	}
	c.timeline(i, "dispatched", how)
	c.count(st, eventDispatched)
	wait := c.s.now - st.waitFrom
	st.waited += wait
	if st.dispatched {
		c.requeuedWaits = append(c.requeuedWaits, wait.Seconds())
		return
	}
	st.dispatched = true
	c.firstWaits = append(c.firstWaits, wait.Seconds())
}

// count books an event of a job's share in its time bucket.
func (c *collector) count(st *jobStat, kind int) {
	if st.share != nil {
		c.ts.count(&st.share.events[kind], c.s.now)
	}
}

func (c *collector) preempted(i int32, reason string) {
	c.timeline(i, "preempted", reason)
	c.lose(i, reason)
}

// lose books the work a preemption cost, and the preemption by kind.
func (c *collector) lose(i int32, reason string) {
	sj := &c.s.jobs[i]
	work := sj.stoppedWork
	sj.stoppedWork = 0
	ps := c.jobs[i].share
	if ps == nil {
		return
	}
	switch {
	case strings.HasPrefix(reason, "Preempted: cross-share"):
		ps.crossShare++
		c.count(&c.jobs[i], eventPreempted)
	case strings.HasPrefix(reason, "Preempted: in-share"):
		ps.inShare++
		c.count(&c.jobs[i], eventPreempted)
	case reason == "Preemption retries exhausted":
		ps.exhausted++
		c.count(&c.jobs[i], eventFailed)
	default:
		return // stopped for another cause (cancelled): not a preemption's loss
	}
	ps.lost += work.Seconds() * float64(c.s.w.Jobs[i].Count)
	for _, g := range c.jobs[i].more {
		if g.share != nil {
			g.share.lost += work.Seconds() * float64(g.count)
		}
	}
}

func (c *collector) ended(i int32, t *jobevents.Transition) {
	delete(c.s.live, t.JobID)
	c.s.ended++
	c.last = max(c.last, c.s.now)
	outcome := strings.ToLower(t.Status)
	if t.Terminated {
		outcome = "cancelled"
	}
	c.counts[outcome]++
	if t.Status == engine.StatusFailed {
		c.lose(i, t.Reason)
	}
	c.timeline(i, outcome, t.Reason)
}

func (c *collector) timeline(i int32, what, detail string) {
	if !c.s.opts.Timeline {
		return
	}
	j := &c.s.w.Jobs[i]
	c.line = append(c.line, TimelineEntry{At: c.s.now.Seconds(), Job: j.ID, Share: j.Share, Event: what, Detail: detail})
}
