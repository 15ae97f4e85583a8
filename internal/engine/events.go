package engine

import (
	"context"
	"time"

	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/record"
)

// setStatus moves a job to a status, recording the transition and, for
// whoever listens, the event that announces it, or for a sink its bare
// transition.
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
	if e.sink != nil {
		c.transitions = append(c.transitions, jobevents.Transition{JobID: j.JobID, Status: status, Reason: t.Reason, At: t.At, Terminated: j.IsTerminated})
	} else {
		c.events = append(c.events, jobevents.Of(j, len(j.History)-1))
	}
}

// JobEvents returns a job's state changes, oldest first. The submission
// itself is not an event, as in AWS Batch.
func (e *Engine) JobEvents(id string) ([]jobevents.Event, error) {
	e.rlock()
	if j := e.jobs[e.jobID(id)]; j != nil {
		defer e.mu.RUnlock()
		return jobevents.History(j), nil
	}
	purged := e.purgedBefore
	e.mu.RUnlock()
	j, err := e.readStored(context.Background(), id, purged)
	if err != nil {
		return nil, err
	}
	return jobevents.History(j), nil
}

// Subscribe delivers every event committed from now on. A subscriber that
// falls more than buf events behind loses the overflow. Call cancel to stop.
func (e *Engine) Subscribe(buf int) (<-chan jobevents.Event, func()) { return e.bus.Subscribe(buf) }

// RecentEvents returns up to the last 1,000 events, oldest first.
func (e *Engine) RecentEvents() []jobevents.Event { return e.bus.Recent() }

// publish hands a committed cycle, begun at start, to the sink, observers
// and subscribers.
func (e *Engine) publish(c *cycle, start time.Time) {
	if e.sink != nil {
		e.sink.Transitions(c.transitions, c.dispatches, c.preempts)
	}
	var took time.Duration
	if e.timed {
		took = time.Since(start)
	}
	for _, o := range e.opts.Observers {
		o.ObserveCycle(took, c.events, c.dispatches, c.preempts)
	}
	e.bus.Publish(c.events)
}
