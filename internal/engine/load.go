package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/store"
)

func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// load rebuilds the records and the core from the store, then reconciles
// live attempts with what the executor knows.
func (e *Engine) load(ctx context.Context) error {
	rs, err := e.opts.Store.Resources(ctx)
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	// Environments, then policies, then queues, then shares: each refers to
	// the ones before.
	order := []string{kindEnv, kindPolicy, kindQueue, kindShare}
	slices.SortStableFunc(rs, func(a, b store.Resource) int {
		return slices.Index(order, a.Kind) - slices.Index(order, b.Kind)
	})
	for _, r := range rs {
		if err := e.loadResource(r); err != nil {
			return fmt.Errorf("load %s %s: %w", r.Kind, r.ARN, err)
		}
	}
	var live []*jobRec
	err = e.opts.Store.Jobs(ctx, func(sj store.Job) error {
		j := &jobRec{}
		if err := json.Unmarshal(sj.Doc, j); err != nil {
			return fmt.Errorf("job %s: %w", sj.ID, err)
		}
		e.jobs[j.JobID] = j
		if t := j.Internal.ClientToken; t != "" {
			e.tokens[t] = j.JobID
		}
		e.lastQ = max(e.lastQ, j.Internal.QueuedAt)
		if !terminal(j.Status) {
			live = append(live, j)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load jobs: %w", err)
	}
	for _, j := range e.jobs {
		e.counts[j.Status]++
		if terminal(j.Status) {
			e.ended = append(e.ended, endMark{id: j.JobID, at: j.Internal.EndedAt})
		}
	}
	slices.SortFunc(e.ended, func(a, b endMark) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id)) })
	for _, j := range live {
		if err := e.restoreJob(j); err != nil {
			return fmt.Errorf("restore job %s: %w", j.JobID, err)
		}
	}
	if err := e.disableLoaded(); err != nil {
		return err
	}
	return e.reconcile(ctx, live)
}

// Queues and shares are loaded enabled and disabled again once the live
// jobs are back: the core takes no job into a DISABLED queue or share, but
// the jobs waiting in one were accepted before it was disabled.
func (e *Engine) disableLoaded() error {
	for _, q := range e.sortedQueues() {
		if q.State == stateDisabled {
			if err := e.core.Apply(e.queueEvent(q)); err != nil {
				return fmt.Errorf("disable job queue %s: %w", q.JobQueueName, err)
			}
		}
		names := slices.Sorted(maps.Keys(q.shares))
		for _, name := range names {
			s := q.shares[name]
			if s.State != stateDisabled {
				continue
			}
			ev, err := e.shareEvent(q, &s.QuotaShare)
			if err == nil {
				err = e.core.Apply(ev)
			}
			if err != nil {
				return fmt.Errorf("disable quota share %s: %w", s.QuotaShareArn, err)
			}
		}
	}
	return nil
}

func (e *Engine) loadResource(r store.Resource) error {
	switch r.Kind {
	case kindEnv:
		se := &envRec{}
		if err := json.Unmarshal(r.Doc, &se.ServiceEnvironment); err != nil {
			return err
		}
		e.envs[se.ServiceEnvironmentName] = se
		return e.core.Apply(e.envEvent(se))
	case kindPolicy:
		p := &policyRec{}
		if err := json.Unmarshal(r.Doc, &p.SchedulingPolicy); err != nil {
			return err
		}
		e.policies[p.Arn] = p
	case kindQueue:
		q := &queueRec{shares: map[string]*shareRec{}}
		if err := json.Unmarshal(r.Doc, &q.JobQueue); err != nil {
			return err
		}
		if len(q.ServiceEnvironmentOrder) > 0 {
			q.env = resourceName(q.ServiceEnvironmentOrder[0].ServiceEnvironment, "service-environment")
		}
		if p := e.policies[q.SchedulingPolicyArn]; p != nil {
			q.quota = p.QuotaSharePolicy != nil
		}
		e.queues[q.JobQueueName] = q
		ev := e.queueEvent(q)
		ev.Disabled = false // until the jobs are back: see disableLoaded
		return e.core.Apply(ev)
	case kindShare:
		s := &shareRec{}
		if err := json.Unmarshal(r.Doc, &s.QuotaShare); err != nil {
			return err
		}
		q := e.queues[resourceName(s.JobQueueArn, "job-queue")]
		if q == nil {
			return fmt.Errorf("job queue %s is missing", s.JobQueueArn)
		}
		s.queue = q.JobQueueName
		q.shares[s.QuotaShareName] = s
		ev, err := e.shareEvent(q, &s.QuotaShare)
		if err != nil {
			return err
		}
		ev.Disabled = false // until the jobs are back: see disableLoaded
		return e.core.Apply(ev)
	}
	return nil
}

// restoreJob puts a live job back into the core as it was.
func (e *Engine) restoreJob(j *jobRec) error {
	ev := e.submitEvent(j)
	if dispatchedStatus(j.Status) {
		e.attempts[j.Internal.AttemptID] = j.JobID
		return e.core.Apply(core.Restore{Submit: ev, DispatchedAt: j.Internal.DispatchedAt})
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
func (e *Engine) reconcile(ctx context.Context, live []*jobRec) error {
	ex := e.opts.Executor
	if ex == nil {
		return nil
	}
	known, err := ex.Attempts(ctx)
	if err != nil {
		return fmt.Errorf("list executor attempts: %w", err)
	}
	seen := map[string]bool{}
	var pending []executor.Update
	for _, u := range known {
		seen[u.AttemptID] = true
		if _, ours := e.attempts[u.AttemptID]; !ours {
			if !u.State.Terminal() {
				if err := ex.Stop(ctx, u.AttemptID, e.opts.StopGrace); err != nil {
					e.log.Warn("stop orphaned attempt", "attempt", u.AttemptID, "err", err)
				}
			}
			continue
		}
		pending = append(pending, u)
	}
	for _, j := range live {
		if !dispatchedStatus(j.Status) || seen[j.Internal.AttemptID] {
			continue
		}
		a := executor.Attempt{ID: j.Internal.AttemptID, JobID: j.JobID, JobName: j.JobName, Payload: []byte(j.ServiceRequestPayload)}
		for _, u := range j.Internal.Demand {
			a.Instances = append(a.Instances, executor.Instances{Type: u.Unit, Count: u.Count})
		}
		if tc := j.TimeoutConfig; tc != nil && tc.AttemptDurationSeconds > 0 {
			a.Timeout = secs(tc.AttemptDurationSeconds)
		}
		if err := ex.Start(ctx, a); err != nil {
			e.log.Warn("restart attempt", "attempt", a.ID, "err", err)
		}
	}
	for _, u := range pending {
		u := u
		go e.post(func(now timeT) error { e.handleUpdate(u, now); return nil })
	}
	return nil
}
