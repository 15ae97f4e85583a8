package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/usage"
)

// DefaultUsageRetention is how long usage history is kept by default.
const DefaultUsageRetention = 400 * 24 * time.Hour

// usagePurgeEvery is how often closed usage segments past retention are
// deleted.
const usagePurgeEvery = time.Hour

// UsageObserver is an Observer that also hears the usage segments each
// committed cycle wrote (closed ones and those it opened; a later one of
// the same Attempt and Seq replaces an earlier one) and the attempts whose
// every segment is now marked Preempted, as the store writes them (the
// simulator sums them).
type UsageObserver interface {
	Observer
	ObserveUsage(segs []usage.Segment, preempted []string)
}

// usageState is the engine's accounting of the capacity attempts hold:
// the tracker of live attempts, whose segments each cycle writes with its
// other changes, so a restart or a failover resumes them from the store
// and nothing is counted twice or lost.
type usageState struct {
	tracker   *usage.Tracker
	dirty     bool      // account at the next cycle even without a change
	lastPurge time.Time // of closed segments past retention
}

// resumeUsage follows again the segments that were open when the store was
// last written; the first cycle closes those of attempts no longer live.
func (e *Engine) resumeUsage(ctx context.Context) error {
	e.usage.tracker = usage.NewTracker()
	e.usage.dirty = true
	us, ok := e.opts.Store.(store.UsageStore)
	if !ok {
		return nil
	}
	return us.OpenUsage(ctx, func(s store.UsageSegment) error {
		e.usage.tracker.Resume(s)
		return nil
	})
}

// accountUsage, at the end of a cycle's decisions, has the tracker follow
// whose capacity every dispatched attempt holds now. Attribution of
// borrowed capacity depends on the whole service environment, so any
// change of a job or resource recomputes every queue's holdings.
func (e *Engine) accountUsage(now time.Time) {
	t := e.tx
	if !e.usage.dirty && len(t.jobs) == 0 && !t.jobsChanged && len(t.resources) == 0 && len(t.deleted) == 0 {
		return
	}
	e.usage.dirty = false
	tr := e.usage.tracker
	nowMs := ms(now)
	live := map[string]bool{}
	for _, q := range e.sortedQueues() {
		for _, h := range e.core.Holdings(q.JobQueueName) {
			j := e.jobs[h.Job]
			if j == nil || j.AttemptID == "" {
				continue
			}
			live[j.AttemptID] = true
			at := nowMs
			if !tr.Follows(j.AttemptID) && j.DispatchedAt > 0 {
				at = min(nowMs, j.DispatchedAt/int64(time.Millisecond))
			}
			a := usage.Attempt{ID: j.AttemptID, Job: j.JobID, Queue: j.Queue, Share: j.QuotaShareName, ShareID: j.ShareIdentifier, Owner: j.Owner}
			t.usage = append(t.usage, tr.Hold(a, usage.Parts(h), at)...)
		}
	}
	for _, id := range tr.Live() {
		if live[id] {
			continue
		}
		stop, preempted := e.attemptEnd(tr.JobOf(id), id, nowMs)
		t.usage = append(t.usage, tr.End(id, stop, preempted)...)
		if preempted {
			t.preemptedAttempts = append(t.preemptedAttempts, id)
		}
	}
	if e.opts.UsageRetention > 0 && now.Sub(e.usage.lastPurge) >= usagePurgeEvery {
		e.usage.lastPurge = now
		t.usagePurgeBefore = ms(now.Add(-e.opts.UsageRetention))
	}
}

// attemptEnd is when attempt id of job ended, by its record (now when the
// record is gone), and whether a preemption ended it.
func (e *Engine) attemptEnd(job, id string, now int64) (int64, bool) {
	j := e.jobs[job]
	if j == nil {
		return now, false
	}
	stop := now
	suffix := "/" + id
	for i := range j.Attempts {
		if a := &j.Attempts[i]; strings.HasSuffix(a.ServiceResourceID.Value, suffix) && a.StoppedAt > 0 {
			stop = min(now, a.StoppedAt)
		}
	}
	return stop, preemptedAttempt(j, suffix)
}

// preemptedAttempt tells whether the job's attempt whose training job ends
// in suffix was preempted: its most recent preemptions include it.
func preemptedAttempt(j *record.Job, suffix string) bool {
	if ps := j.PreemptionSummary; ps != nil {
		for _, a := range ps.RecentPreemptedAttempts {
			if strings.HasSuffix(a.ServiceResourceID.Value, suffix) {
				return true
			}
		}
	}
	return false
}

// afterUsageCommit hands the cycle's segments to usage observers and
// purges closed segments past retention.
func (e *Engine) afterUsageCommit(ctx context.Context, t *tx) {
	if len(t.usage) > 0 || len(t.preemptedAttempts) > 0 {
		for _, o := range e.opts.Observers {
			if uo, ok := o.(UsageObserver); ok {
				uo.ObserveUsage(t.usage, t.preemptedAttempts)
			}
		}
	}
	if t.usagePurgeBefore > 0 {
		if us, ok := e.opts.Store.(store.UsageStore); ok {
			if _, err := us.PurgeUsage(ctx, t.usagePurgeBefore); err != nil {
				e.log.Warn("purge usage", "err", err)
			}
		}
	}
}

// ErrNoUsage is Usage's error on a store that keeps no usage history.
var ErrNoUsage = errors.New("this store keeps no usage history")

// Usage reports the usage history q asks for, from the store, with the
// attempts still holding capacity counted up to now; a period given by
// q.Since ends now. It returns the query with its period resolved.
func (e *Engine) Usage(ctx context.Context, q usage.Query) (usage.Query, []usage.Row, error) {
	now := ms(e.opts.Clock.Now())
	q = q.Resolve(now)
	if err := q.Check(); err != nil {
		return q, nil, &Error{Code: Invalid, Message: err.Error()}
	}
	us, ok := e.opts.Store.(store.UsageStore)
	if !ok {
		return q, nil, &Error{Code: Internal, Message: "internal error", Err: ErrNoUsage}
	}
	rep := usage.NewReport(q, now)
	err := us.Usage(ctx, q.From, q.To, func(s store.UsageSegment) error {
		rep.Add(s)
		return nil
	})
	if err != nil {
		return q, nil, &Error{Code: Internal, Message: "internal error", Err: err}
	}
	return q, rep.Rows(), nil
}

// UsageCounters returns the capacity held since this engine started, by
// queue, share and kind, up to now: what counters export.
func (e *Engine) UsageCounters() []usage.Counter {
	e.rlock()
	defer e.mu.RUnlock()
	if e.usage.tracker == nil {
		return nil
	}
	return e.usage.tracker.Counters(ms(e.opts.Clock.Now()))
}
