// Package jobevents is the engine's event bus: the service jobs' state
// changes as events, what observers hear of each committed cycle, and the
// subscribers and the recent events that the event streams read.
package jobevents

import (
	"strconv"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/record"
)

// Event is a service job's entry into a status: the AWS Batch "Batch
// Service Job State Change" event, which batchapi shapes for clients.
type Event struct {
	ID string // "<job ID>-<n>": the job's nth transition
	At int64  // epoch ms
	// Job is the job as it stood then, without its request payload.
	Job record.Job
}

// Of renders transition i of job j as an event.
func Of(j *record.Job, i int) Event {
	t := j.History[i]
	d := record.Detached(j)
	d.ServiceRequestPayload = "" // events carry the job's state, not its request
	d.Status, d.StatusReason = t.Status, t.Reason
	return Event{ID: j.JobID + "-" + strconv.Itoa(i), At: t.At, Job: d}
}

// History renders the job's transitions but the first as events, oldest
// first. The submission itself is not an event, as in AWS Batch.
func History(j *record.Job) []Event {
	out := []Event{}
	for i := 1; i < len(j.History); i++ {
		out = append(out, Of(j, i))
	}
	return out
}

// Transition is a job's entry into a status, without the rest of the job.
type Transition struct {
	JobID          string
	Status, Reason string
	At             int64 // epoch ms
	Terminated     bool  // the job was terminated (IsTerminated)
}

// Transition is the transition the event announces.
func (ev *Event) Transition() Transition {
	return Transition{JobID: ev.Job.JobID, Status: ev.Job.Status, Reason: ev.Job.StatusReason, At: ev.At, Terminated: ev.Job.IsTerminated}
}

// Dispatch describes a dispatch, for observers.
type Dispatch struct {
	Queue, Share string
	Via          string // idle, reclaim, in-share
	Borrowed     bool
	Waited       time.Duration // from submission
}

// Preempt describes a preemption, for observers.
type Preempt struct {
	Queue, Share string
	Kind         string // cross-share or in-share
}

// Observer hears what each committed cycle did. Calls come from the
// engine's loop after the commit; they must be quick.
type Observer interface {
	ObserveCycle(took time.Duration, events []Event, dispatches []Dispatch, preempts []Preempt)
}

// RecentSize is how many of the latest events Bus.Recent returns.
const RecentSize = 1000

// Bus hands committed events to subscribers and keeps the latest ones. Its
// methods are safe for concurrent use.
type Bus struct {
	mu     sync.Mutex
	next   int
	chans  map[int]chan Event
	recent []*Event // the latest events, oldest first: at most 2 × RecentSize
}

// Subscribe delivers every event published from now on. A subscriber that
// falls more than buf events behind loses the overflow. Call cancel to stop.
func (b *Bus) Subscribe(buf int) (<-chan Event, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.chans == nil {
		b.chans = map[int]chan Event{}
	}
	id := b.next
	b.next++
	ch := make(chan Event, buf)
	b.chans[id] = ch
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if c, ok := b.chans[id]; ok {
			delete(b.chans, id)
			close(c)
		}
	}
}

// Recent returns up to the last RecentSize events, oldest first.
func (b *Bus) Recent() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.recent[max(0, len(b.recent)-RecentSize):]
	out := make([]Event, len(kept))
	for i, ev := range kept {
		out[i] = *ev
	}
	return out
}

// Publish hands a committed cycle's events to the subscribers and keeps
// them as the recent ones. The bus keeps pointers into events: the caller
// must not change them afterwards.
func (b *Bus) Publish(events []Event) {
	if len(events) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Pointers, not copies: an event is large, and a cycle's events are
	// not changed once published.
	for i := max(0, len(events)-RecentSize); i < len(events); i++ {
		b.recent = append(b.recent, &events[i])
	}
	// Trim only when twice the size, so the copy costs O(1) per event.
	if n := len(b.recent) - RecentSize; n > RecentSize {
		clear(b.recent[:n])
		b.recent = append(b.recent[:0], b.recent[n:]...)
	}
	for _, ev := range events {
		for _, ch := range b.chans {
			select {
			case ch <- ev:
			default:
			}
		}
	}
}
