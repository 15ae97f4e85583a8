package engine

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/record"
)

// JobEvent is a service job's entry into a status: the AWS Batch "Batch
// Service Job State Change" event, which batchapi shapes for clients.
type JobEvent struct {
	ID string // "<job ID>-<n>": the job's nth transition
	At int64  // epoch ms
	// Job is the job as it stood then, without its request payload.
	Job record.Job
}

// DispatchInfo describes a dispatch, for observers.
type DispatchInfo struct {
	Queue, Share string
	Via          string // idle, reclaim, in-share
	Borrowed     bool
	Waited       time.Duration // from submission
}

// PreemptInfo describes a preemption, for observers.
type PreemptInfo struct {
	Queue, Share string
	Kind         string // cross-share or in-share
}

// Observer hears what each committed cycle did. Calls come from the
// engine's loop after the commit; they must be quick.
type Observer interface {
	ObserveCycle(took time.Duration, events []JobEvent, dispatches []DispatchInfo, preempts []PreemptInfo)
}

// Transition is a job's entry into a status, without the rest of the job.
type Transition struct {
	JobID          string
	Status, Reason string
	At             int64 // epoch ms
	Terminated     bool  // the job was terminated (IsTerminated)
}

// TransitionObserver is an Observer that needs of each event only its
// transition, and not the cycle's time. An engine with Options.NoEvents
// calls ObserveTransitions instead of ObserveCycle; others call
// ObserveCycle. ts is reused after the call.
type TransitionObserver interface {
	Observer
	ObserveTransitions(ts []Transition, dispatches []DispatchInfo, preempts []PreemptInfo)
}

// TransitionOf is the transition an event announces.
func TransitionOf(ev *JobEvent) Transition {
	return Transition{JobID: ev.Job.JobID, Status: ev.Job.Status, Reason: ev.Job.StatusReason, At: ev.At, Terminated: ev.Job.IsTerminated}
}

// listeners tells what a cycle must record of each transition: events,
// unless nobody reads them (Options.NoEvents, and every observer content
// with transitions); transitions when an observer takes them instead. And
// whether to time cycles: only ObserveCycle hears their time.
func listeners(opts *Options) (events, transitions, timed bool) {
	events = !opts.NoEvents
	for _, o := range opts.Observers {
		if _, ok := o.(TransitionObserver); ok && opts.NoEvents {
			transitions = true
		} else {
			events, timed = true, true
		}
	}
	return events, transitions, timed
}

// setStatus moves a job to a status, recording the transition and, for
// whoever listens, the event or transition that announces it.
func (e *Engine) setStatus(c *cycle, j *record.Job, status string, now time.Time) {
	e.touch(c, j)
	if j.Status == status {
		return
	}
	e.counts[j.Status]--
	e.counts[status]++
	j.Status = status
	t := record.Transition{At: ms(now), Status: status, Reason: j.StatusReason}
	j.History = append(j.History, t)
	if e.wantEvents {
		c.events = append(c.events, event(j, len(j.History)-1))
	}
	if e.wantTransitions {
		c.transitions = append(c.transitions, Transition{JobID: j.JobID, Status: status, Reason: t.Reason, At: t.At, Terminated: j.IsTerminated})
	}
}

// event renders transition i of job j as a JobEvent.
func event(j *record.Job, i int) JobEvent {
	t := j.History[i]
	d := detached(j)
	d.ServiceRequestPayload = "" // events carry the job's state, not its request
	d.Status, d.StatusReason = t.Status, t.Reason
	return JobEvent{ID: j.JobID + "-" + strconv.Itoa(i), At: t.At, Job: d}
}

// detached copies the job's record without sharing what the engine changes
// in place later (an attempt's end, the preemption count, tags): events and
// views are read after the lock is released, by subscribers and encoders.
func detached(j *record.Job) record.Job {
	d := *j
	// Shared, but clipped: an append to the copy's lists cannot write
	// where the loop appends to the record's.
	d.History, d.Demand, d.CapacityUsage, d.WaitFor = slices.Clip(d.History), slices.Clip(d.Demand), slices.Clip(d.CapacityUsage), slices.Clip(d.WaitFor)
	d.Attempts = slices.Clone(d.Attempts)
	if ps := d.PreemptionSummary; ps != nil {
		c := *ps
		c.RecentPreemptedAttempts = slices.Clone(c.RecentPreemptedAttempts)
		d.PreemptionSummary = &c
	}
	d.Tags = maps.Clone(d.Tags)
	return d
}

// JobEvents returns a job's state changes, oldest first. The submission
// itself is not an event, as in AWS Batch.
func (e *Engine) JobEvents(id string) ([]JobEvent, error) {
	e.rlock()
	if j := e.jobs[e.jobID(id)]; j != nil {
		defer e.mu.RUnlock()
		return jobEvents(j), nil
	}
	purged := e.purgedBefore
	e.mu.RUnlock()
	j, err := e.readStored(context.Background(), id, purged)
	if err != nil {
		return nil, err
	}
	return jobEvents(j), nil
}

// jobEvents renders the job's transitions but the first as events.
func jobEvents(j *record.Job) []JobEvent {
	out := []JobEvent{}
	for i := 1; i < len(j.History); i++ {
		out = append(out, event(j, i))
	}
	return out
}

// subscribers receive events after each commit.
type subscribers struct {
	mu     sync.Mutex
	next   int
	chans  map[int]chan JobEvent
	recent []*JobEvent // the latest events, oldest first: at most 2 × recentEvents
}

const recentEvents = 1000

// Subscribe delivers every event committed from now on. A subscriber that
// falls more than buf events behind loses the overflow. Call cancel to stop.
func (e *Engine) Subscribe(buf int) (<-chan JobEvent, func()) {
	s := &e.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chans == nil {
		s.chans = map[int]chan JobEvent{}
	}
	id := s.next
	s.next++
	ch := make(chan JobEvent, buf)
	s.chans[id] = ch
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c, ok := s.chans[id]; ok {
			delete(s.chans, id)
			close(c)
		}
	}
}

// RecentEvents returns up to the last 1,000 events, oldest first.
func (e *Engine) RecentEvents() []JobEvent {
	s := &e.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.recent[max(0, len(s.recent)-recentEvents):]
	out := make([]JobEvent, len(kept))
	for i, ev := range kept {
		out[i] = *ev
	}
	return out
}

// publish hands a committed cycle, begun at start, to subscribers and
// observers.
func (e *Engine) publish(c *cycle, start time.Time) {
	var took time.Duration
	if e.timed {
		took = time.Since(start)
	}
	for _, o := range e.opts.Observers {
		if to, ok := o.(TransitionObserver); ok && e.opts.NoEvents {
			to.ObserveTransitions(c.transitions, c.dispatches, c.preempts)
		} else {
			o.ObserveCycle(took, c.events, c.dispatches, c.preempts)
		}
	}
	if len(c.events) == 0 {
		return
	}
	s := &e.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	// Pointers, not copies: an event is large, and a cycle's events are
	// not changed once published.
	for i := max(0, len(c.events)-recentEvents); i < len(c.events); i++ {
		s.recent = append(s.recent, &c.events[i])
	}
	// Trim only when twice the size, so the copy costs O(1) per event.
	if n := len(s.recent) - recentEvents; n > recentEvents {
		clear(s.recent[:n])
		s.recent = append(s.recent[:0], s.recent[n:]...)
	}
	for _, ev := range c.events {
		for _, ch := range s.chans {
			select {
			case ch <- ev:
			default:
			}
		}
	}
}
