package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// load rebuilds the records and the core from the store, then reconciles
// live attempts with what the executor knows. Only the live jobs are read,
// and the clientTokens of the ended ones; an ended job is read when it is
// asked for.
func (e *Engine) load(ctx context.Context) error {
	rs, err := e.opts.Store.Resources(ctx)
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	restores, fifo, err := e.model.Load(rs)
	if err != nil {
		return err
	}
	for _, q := range fifo {
		e.opts.Logger.Warn("job queue with a fair-share policy shares its service environment with other queues: it stays FIFO",
			"queue", q.Queue, "env", q.Env)
	}
	if err := e.restore(restores); err != nil {
		return err
	}
	counts, err := e.opts.Store.CountJobs(ctx)
	if err != nil {
		return fmt.Errorf("count jobs: %w", err)
	}
	maps.Copy(e.counts, counts)
	var live []*record.Job
	err = e.opts.Store.LiveJobs(ctx, func(sj store.Job) error {
		j, err := decodeJob(sj)
		if err != nil {
			return err
		}
		if terminal(j.Status) {
			return fmt.Errorf("job %s is %s but stored as live", j.JobID, j.Status)
		}
		e.jobs[j.JobID] = j
		if t := j.ClientToken; t != "" {
			e.tokens[t] = j.JobID
		}
		e.lastQ = max(e.lastQ, j.QueuedAt)
		live = append(live, j)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load jobs: %w", err)
	}
	// Of the ended jobs, only their clientTokens are kept, to answer a
	// retried submission; the jobs are read when asked for.
	err = e.opts.Store.EndedTokens(ctx, func(t store.EndedToken) error {
		e.tokens[t.Token] = t.ID
		e.ended = append(e.ended, endMark{id: t.ID, at: t.EndedAt, token: t.Token})
		return nil
	})
	if err != nil {
		return fmt.Errorf("load ended jobs' tokens: %w", err)
	}
	for _, j := range live {
		if err := e.restoreJob(j); err != nil {
			return fmt.Errorf("restore job %s: %w", j.JobID, err)
		}
	}
	if err := e.loadFairUsage(ctx, e.opts.Clock.Now()); err != nil {
		return err
	}
	disabled, err := e.model.DisabledEvents()
	if err != nil {
		return err
	}
	if err := e.restore(disabled); err != nil {
		return err
	}
	if err := e.resumeUsage(ctx); err != nil {
		return fmt.Errorf("load usage: %w", err)
	}
	return e.reconcile(ctx, live)
}

func decodeJob(sj store.Job) (*record.Job, error) {
	j, err := record.DecodeJob(sj.Doc)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", sj.ID, err)
	}
	return j, nil
}

// storedJob decodes a job read from the store for one not in memory (it
// ended before this start, or was forgotten since); nil when there is none.
func storedJob(sj store.Job, err error) (*record.Job, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err == nil {
		var j *record.Job
		if j, err = decodeJob(sj); err == nil {
			return j, nil
		}
	}
	return nil, &Error{Code: Internal, Message: "internal error", Err: err}
}

// keepJob keeps a job read from the store in memory, with mu held to
// write: a change to it (its tags) is then committed, and retention
// forgets it.
func (e *Engine) keepJob(j *record.Job) {
	if e.jobs[j.JobID] != nil {
		return
	}
	e.jobs[j.JobID] = j
	if t := j.ClientToken; t != "" {
		e.tokens[t] = j.JobID
	}
	if terminal(j.Status) {
		e.ended = append(e.ended, endMark{id: j.JobID, at: j.EndedAt})
	}
}

// restore applies to the core the events that restore the resources.
func (e *Engine) restore(rs []batchmodel.Restore) error {
	for _, r := range rs {
		if err := e.core.Apply(r.Event); err != nil {
			return fmt.Errorf("%s: %w", r.What, err)
		}
	}
	return nil
}

// restoreJob puts a live job back into the core as it was.
func (e *Engine) restoreJob(j *record.Job) error {
	ev := e.submitEvent(j)
	if dispatchedStatus(j.Status) {
		if err := e.core.Apply(core.Restore{Submit: ev, DispatchedAt: j.DispatchedAt}); err != nil {
			return err
		}
		e.attempts[j.AttemptID] = liveAttempt{job: j.JobID, handle: e.core.Handle(j.JobID)}
		return nil
	}
	if j.Status == StatusSubmitted {
		e.counts[StatusSubmitted]--
		e.counts[StatusRunnable]++
		j.Status = StatusRunnable
	}
	return e.core.Apply(ev)
}

// reconcile compares dispatched jobs with the executor's attempts: reports
// of attempts that changed while the server was down are applied by the
// first cycles, attempts it never heard of are started again (a crash
// between commit and start), and attempts nobody owns any more are stopped.
func (e *Engine) reconcile(ctx context.Context, jobs []*record.Job) error {
	ex := e.opts.Executor
	if ex == nil {
		return nil
	}
	known, err := ex.Attempts(ctx)
	if err != nil {
		return fmt.Errorf("list executor attempts: %w", err)
	}
	seen := map[string]bool{}
	live := map[string]bool{}             // attempts whose processes may still run
	ended := map[string]executor.Update{} // closed attempts the executor saw end
	var pending []executor.Update
	for _, u := range known {
		seen[u.AttemptID] = true
		if !u.State.Terminal() {
			live[u.AttemptID] = true
		}
		if _, ours := e.attempts[u.AttemptID]; !ours {
			if !u.State.Terminal() {
				e.disp.stop(u.AttemptID, e.opts.StopGrace) // its job is gone, and its grace with it
			} else {
				ended[u.AttemptID] = u
			}
			continue
		}
		pending = append(pending, u)
	}
	// A preempted attempt that was still stopping when the server went
	// down gets its end now: the executor's, or now where the executor
	// has no trace of it. One still live ends through the stop above.
	for _, j := range jobs {
		for _, a := range j.Attempts {
			id := a.ServiceResourceID.Value[strings.LastIndexByte(a.ServiceResourceID.Value, '/')+1:]
			if !a.Stopping() || live[id] {
				continue
			}
			u, ok := ended[id]
			if !ok {
				u = executor.Update{AttemptID: id, JobID: j.JobID, State: executor.Stopped}
			}
			pending = append(pending, u)
		}
	}
	for _, j := range jobs {
		if !dispatchedStatus(j.Status) || seen[j.AttemptID] {
			continue
		}
		a := e.attemptOf(j)
		// It may be a preemptor whose victims still run: it waits for them,
		// as long as the server's grace period allows (theirs is not kept).
		var waitFor []string
		for _, v := range j.WaitFor {
			if live[v] {
				waitFor = append(waitFor, v)
			}
		}
		if len(waitFor) > 0 {
			e.disp.hold(a, waitFor, e.opts.StopGrace)
		} else {
			e.disp.start(a)
		}
	}
	for _, u := range pending {
		if e.driven {
			e.postUpdate(u)
		} else {
			go e.postUpdate(u) // Run is not reading the ops yet
		}
	}
	return nil
}
