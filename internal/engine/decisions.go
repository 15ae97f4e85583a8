package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// maxRecentPreemptions is how many preempted attempts a job keeps.
const maxRecentPreemptions = 10

// applyDecisions turns one core cycle's decisions into record changes and
// executor actions.
func (e *Engine) applyDecisions(c *cycle, ds core.Decisions) {
	// Victims preempted for a job must exit before its attempt starts;
	// hold is the longest grace period among them.
	waitFor := map[string][]string{}
	hold := map[string]time.Duration{}
	victims := map[string][]string{} // "JOB in share SHARE" of each victim waited for
	for _, d := range ds.List {
		j := e.jobs[d.Job]
		if j == nil {
			continue
		}
		switch d.Kind {
		case core.Dispatch:
			e.dispatched(c, j, d, waitFor[d.Job], hold[d.Job])
			if vs := victims[d.Job]; len(vs) > 0 {
				j.StatusReason = waitingForVictims(vs, hold[d.Job])
			}
		case core.Preempt:
			var stopping time.Duration
			if a := j.AttemptID; a != "" && e.stopAttempt(c, j) {
				stopping = e.graceOf(j)
				waitFor[d.For] = append(waitFor[d.For], a)
				hold[d.For] = max(hold[d.For], stopping)
				victims[d.For] = append(victims[d.For], j.JobID+" in share "+j.QuotaShareName)
			}
			e.preempted(c, j, d, stopping)
		case core.Fail:
			e.fail(c, j, d.Reason.String())
		case core.Wait:
			e.waiting(c, j, d)
		}
	}
}

// attemptOf is the executor's view of the job's current attempt, but for
// what its payload says: readRequest adds that off the loop, when the
// attempt is started.
func (e *Engine) attemptOf(j *record.Job) executor.Attempt {
	a := executor.Attempt{ID: j.AttemptID, JobID: j.JobID, JobName: j.JobName, Queue: j.Queue, Share: j.QuotaShareName,
		Payload: []byte(j.ServiceRequestPayload), Grace: e.opts.StopGrace}
	if l := e.opts.Lease; l != nil {
		a.Term = l.Term()
	}
	if la := j.LatestAttempt; la != nil {
		a.TrainingJobArn = la.ServiceResourceID.Value
	}
	for _, u := range j.Demand {
		a.Instances = append(a.Instances, executor.Instances{Type: u.Unit, Count: u.Count})
	}
	if tc := j.TimeoutConfig; tc != nil && tc.AttemptDurationSeconds > 0 {
		a.Timeout = secs(tc.AttemptDurationSeconds)
	}
	return a
}

// readRequest parses the attempt's payload, once for the attempt: the
// dispatcher calls it before the executor's first Start, off the engine's
// loop. The executor is handed the request (Attempt.Request), and the
// attempt's grace period is the payload's SHARQ_STOP_GRACE_SECONDS, else
// the server's, which attemptOf set. A payload that sets a malformed one
// keeps the server's here; the executor refuses to start it. A payload
// that does not parse goes without a request: the executor refuses it,
// with its reason.
func readRequest(a *executor.Attempt) {
	if a.Request != nil {
		return
	}
	r, ok := payloadMemo.getBytes(a.Payload)
	if !ok {
		var err error
		if r, err = trainingjob.Parse(a.Payload); err != nil {
			return
		}
	}
	a.Request = r
	if g, ok, err := r.StopGrace(); ok && err == nil {
		a.Grace = g
	}
}

// graceOf is the job's grace period: its payload's SHARQ_STOP_GRACE_SECONDS,
// else the server's. A payload that sets a malformed one gets the server's
// here; the executor refuses to start it.
func (e *Engine) graceOf(j *record.Job) time.Duration {
	if !strings.Contains(j.ServiceRequestPayload, trainingjob.StopGraceEnv) {
		return e.opts.StopGrace
	}
	if r, err := trainingjob.Parse([]byte(j.ServiceRequestPayload)); err == nil {
		if g, ok, err := r.StopGrace(); ok && err == nil {
			return g
		}
	}
	return e.opts.StopGrace
}

// dispatched starts the job's next attempt once the cycle is durable; hold
// is the longest grace period of the victims in waitFor, which it waits for.
func (e *Engine) dispatched(c *cycle, j *record.Job, d core.Decision, waitFor []string, hold time.Duration) {
	now := c.now
	j.AttemptSeq++
	id := attemptName(j.JobName, j.JobID, j.AttemptSeq)
	j.AttemptID = id
	j.DispatchedAt = now.UnixNano()
	j.WaitFor = waitFor
	j.StatusReason = ""
	e.setStatus(c, j, StatusScheduled, now)
	j.ScheduledAt = ms(now)
	j.StartedAt, j.StoppedAt = 0, 0
	rid := record.ServiceResourceID{Name: "TrainingJobArn", Value: e.base().TrainingJob(id)}
	j.LatestAttempt = &record.LatestAttempt{ServiceResourceID: rid}
	j.Attempts = append(j.Attempts, record.Attempt{ServiceResourceID: rid})
	delete(e.waits, j.JobID)
	e.attempts[id] = liveAttempt{job: j.JobID, handle: d.Handle}
	e.touch(c, j)
	c.starts = append(c.starts, start{e.attemptOf(j), waitFor, hold})
	c.dispatches = append(c.dispatches, jobevents.Dispatch{Queue: j.Queue, Share: j.QuotaShareName,
		Via: d.Via.String(), Borrowed: len(d.Borrowed) > 0, Waited: now.Sub(time.UnixMilli(j.CreatedAt))})
}

// attemptName names an attempt's training job as AWS Batch does: "AWSBatch",
// the job name and 32 hex digits, within SageMaker's 63 characters.
func attemptName(name, id string, seq int) string {
	sum := sha256.Sum256(strconv.AppendInt(append([]byte(id), '/'), int64(seq), 10))
	if len(name) > 63-8-32 {
		name = name[:63-8-32]
	}
	return "AWSBatch" + name + hex.EncodeToString(sum[:16])
}

// liveAttempt is an attempt the engine started and has not closed: its
// job, and the job's handle in the core, which finds it there without a
// lookup by ID when the attempt ends.
type liveAttempt struct {
	job    string
	handle core.Handle
}

// endAttempt closes the current attempt record and forgets the live attempt.
// A preempted attempt still stopping is closed already: its end is the
// executor's to report.
func (e *Engine) endAttempt(j *record.Job, reason string, now time.Time) {
	if a := j.CurrentAttempt(); a != nil && a.StoppedAt == 0 && !a.Stopping() {
		a.StoppedAt = ms(now)
		a.StatusReason = reason
	}
	if id := j.AttemptID; id != "" {
		delete(e.attempts, id)
	}
}

// waitingPreempted begins the statusReason of a preemptor whose start waits
// for its victims' processes to stop.
const waitingPreempted = "waiting for the preempted job"

// waitingForVictims is a preemptor's statusReason while its start waits
// for its victims: "waiting for the preempted job X in share QS2 to stop:
// up to 40s".
func waitingForVictims(victims []string, grace time.Duration) string {
	s := ""
	if len(victims) > 1 {
		s = "s"
	}
	return fmt.Sprintf("%s%s %s to stop: up to %s", waitingPreempted, s, strings.Join(victims, ", "), inSeconds(grace))
}

// inSeconds says a grace period as the executors do: "40s", "120s".
func inSeconds(d time.Duration) string { return fmt.Sprintf("%gs", d.Seconds()) }

// preempted closes the job's attempt; stopping is the grace period its
// processes get when they have to be stopped, 0 when there are none.
func (e *Engine) preempted(c *cycle, j *record.Job, d core.Decision, stopping time.Duration) {
	now := c.now
	reason := d.Reason.String()
	e.endAttempt(j, reason, now)
	if a := j.CurrentAttempt(); a != nil && stopping > 0 && a.StatusReason == reason {
		a.StatusReason += record.StoppingSince + now.UTC().Format(time.RFC3339) + ", up to " + inSeconds(stopping) + " grace period"
		a.StoppedAt = 0
	}
	ps := j.PreemptionSummary
	if ps == nil {
		ps = &record.PreemptionSummary{}
		j.PreemptionSummary = ps
	}
	ps.PreemptedAttemptCount++
	c.preempts = append(c.preempts, jobevents.Preempt{Queue: j.Queue, Share: j.QuotaShareName, Kind: d.Preemption.String()})
	if a := j.CurrentAttempt(); a != nil {
		ps.RecentPreemptedAttempts = append([]record.Attempt{*a}, ps.RecentPreemptedAttempts...)
		if len(ps.RecentPreemptedAttempts) > maxRecentPreemptions {
			ps.RecentPreemptedAttempts = ps.RecentPreemptedAttempts[:maxRecentPreemptions]
		}
	}
	j.AttemptID = ""
	j.StatusReason = reason
	if d.Requeued {
		e.setStatus(c, j, StatusRunnable, now)
	}
	e.touch(c, j)
}

// stopAttempt has the executor stop the job's live attempt, with the job's
// grace period, once the cycle is durable. An attempt dispatched in this
// same cycle (then preempted by a later pass, or failed) is simply never
// started; stopAttempt reports whether there is a stop to wait for.
func (e *Engine) stopAttempt(c *cycle, j *record.Job) bool {
	id := j.AttemptID
	if i := slices.IndexFunc(c.starts, func(s start) bool { return s.attempt.ID == id }); i >= 0 {
		c.starts = slices.Delete(c.starts, i, i+1)
		return false
	}
	c.stops = append(c.stops, stop{id, e.graceOf(j)})
	return true
}

// fail ends a job as FAILED, now.
func (e *Engine) fail(c *cycle, j *record.Job, reason string) {
	now := c.now
	if dispatchedStatus(j.Status) && j.AttemptID != "" {
		e.stopAttempt(c, j)
	}
	e.endAttempt(j, reason, now)
	e.finish(c, j, StatusFailed, reason, now)
}

func (e *Engine) finish(c *cycle, j *record.Job, status, reason string, now time.Time) {
	j.AttemptID = ""
	j.StatusReason = reason
	e.setStatus(c, j, status, now)
	j.StoppedAt = ms(now)
	j.EndedAt = ms(now)
	e.ended = append(e.ended, endMark{id: j.JobID, at: j.EndedAt})
	delete(e.waits, j.JobID)
	e.touch(c, j)
}

func (e *Engine) waiting(c *cycle, j *record.Job, d core.Decision) {
	now := c.now
	if j.Status == StatusSubmitted {
		e.setStatus(c, j, StatusRunnable, now)
	}
	if !d.Reason.Misconfiguration() {
		delete(e.waits, j.JobID)
		if j.WaitSince != 0 {
			j.WaitSince = 0
			e.touch(c, j)
		}
		return
	}
	r := d.Reason.String()
	if w, ok := e.waits[j.JobID]; !ok || w.reason != r {
		since := ms(now)
		if !ok && j.StatusReason == r && j.WaitSince > 0 {
			since = j.WaitSince // it waited so before a restart
		}
		e.waits[j.JobID] = waitMark{reason: r, since: since}
		if j.WaitSince != since {
			j.WaitSince = since
			e.touch(c, j)
		}
	}
	if j.StatusReason != r {
		j.StatusReason = r
		e.touch(c, j)
	}
}

// handleUpdate applies an executor report about an attempt.
func (e *Engine) handleUpdate(c *cycle, u executor.Update) {
	if u.State.Terminal() {
		e.disp.ended(u.AttemptID) // a preemptor may wait for it
	}
	la, ok := e.attempts[u.AttemptID]
	j := e.jobs[la.job]
	if !ok || j == nil || j.AttemptID != u.AttemptID {
		e.closedAttemptEnded(c, u) // an attempt the engine already closed (preempted, terminated)
		return
	}
	at := c.now
	if !u.At.IsZero() {
		at = u.At
	}
	switch u.State {
	case executor.Starting:
		// A reason says what the start waits for: its data, say.
		if u.Reason != "" {
			e.setReason(c, j, u.Reason)
		}
		if j.Status == StatusScheduled {
			clearWaitingPreempted(j)
			e.setStatus(c, j, StatusStarting, at)
		}
	case executor.Running:
		// A reason says what a run does besides training: uploading its
		// model, say; the first report of a run clears the start's.
		if u.Reason != "" || j.Status == StatusStarting {
			e.setReason(c, j, u.Reason)
		}
		if j.Status != StatusRunning {
			clearWaitingPreempted(j)
			j.StartedAt = ms(at)
			if a := j.CurrentAttempt(); a != nil {
				a.StartedAt = ms(at)
			}
			e.setStatus(c, j, StatusRunning, at)
		}
	case executor.Succeeded:
		e.mustCore(core.AttemptEnded{Job: j.JobID, Handle: la.handle})
		e.recordRunTime(j, at)
		reason := "Training job completed"
		e.endAttempt(j, reason, at)
		e.finish(c, j, StatusSucceeded, reason, at)
	case executor.Lost:
		// Not the job's fault: requeue without using a retry attempt.
		e.mustCore(core.AttemptEnded{Job: j.JobID, Handle: la.handle, Requeue: true})
		e.endAttempt(j, u.Reason, at)
		e.requeued(c, j, u.Reason, at)
	case executor.Failed, executor.Stopped:
		reason := u.Reason
		if reason == "" {
			reason = "Attempt " + strings.ToLower(string(u.State))
		}
		e.endAttempt(j, reason, at)
		if e.retry(j, reason) {
			e.mustCore(core.AttemptEnded{Job: j.JobID, Handle: la.handle, Requeue: true})
			j.Entries++
			e.requeued(c, j, reason, at)
			return
		}
		e.mustCore(core.AttemptEnded{Job: j.JobID, Handle: la.handle})
		e.finish(c, j, StatusFailed, reason, at)
	}
}

// clearWaitingPreempted drops a preemptor's reason for waiting once it
// starts.
func clearWaitingPreempted(j *record.Job) {
	if strings.HasPrefix(j.StatusReason, waitingPreempted) {
		j.StatusReason = ""
	}
}

// setReason sets a live job's statusReason from its executor's report.
func (e *Engine) setReason(c *cycle, j *record.Job, reason string) {
	if j.StatusReason != reason {
		j.StatusReason = reason
		e.touch(c, j)
	}
}

// closedAttemptEnded completes the record of an attempt the engine had
// already closed once its processes are gone: a preempted attempt that was
// stopping is stopped at the time the executor reports, and its reason
// says so no longer; and how the processes ended, when that was not the
// plain stop asked for: e.g. "killed with SIGKILL after 120s grace period"
// for a job that ignored SIGTERM.
func (e *Engine) closedAttemptEnded(c *cycle, u executor.Update) {
	j := e.jobs[u.JobID]
	if j == nil || !u.State.Terminal() {
		return
	}
	at := c.now
	if !u.At.IsZero() {
		at = u.At
	}
	more := ""
	if u.State == executor.Stopped && u.Reason != "" && u.Reason != "Stopped" {
		more = strings.TrimPrefix(u.Reason, "Stopped: ")
	}
	amend := func(as []record.Attempt) bool {
		changed := false
		for i := range as {
			a := &as[i]
			if !strings.HasSuffix(a.ServiceResourceID.Value, "/"+u.AttemptID) || a.StoppedAt == 0 && !a.Stopping() {
				continue
			}
			reason, stopped := a.StatusReason, a.StoppedAt
			if k := strings.Index(reason, record.StoppingSince); k >= 0 {
				reason, stopped = reason[:k], ms(at)
			}
			if more != "" && !strings.Contains(reason, more) {
				reason += "; " + more
			}
			if reason != a.StatusReason || stopped != a.StoppedAt {
				a.StatusReason, a.StoppedAt = reason, stopped
				changed = true
			}
		}
		return changed
	}
	changed := amend(j.Attempts)
	if ps := j.PreemptionSummary; ps != nil && amend(ps.RecentPreemptedAttempts) {
		changed = true
	}
	if changed {
		e.touch(c, j)
	}
}

func (e *Engine) requeued(c *cycle, j *record.Job, reason string, now time.Time) {
	j.AttemptID = ""
	j.StatusReason = reason
	e.setStatus(c, j, StatusRunnable, now)
}

// retry decides whether a failed attempt is tried again: the first
// evaluateOnExit rule whose glob matches the reason decides; with no match,
// retry while attempts remain.
func (e *Engine) retry(j *record.Job, reason string) bool {
	rs := j.RetryStrategy
	if rs == nil || j.Entries >= rs.Attempts {
		return false
	}
	for _, r := range rs.EvaluateOnExit {
		if globMatch(r.OnStatusReason, reason) {
			return strings.EqualFold(r.Action, "RETRY")
		}
	}
	return true
}

// globMatch matches s against a pattern where * stands for any run of
// characters; an empty pattern matches everything.
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, p)
		}
		k := strings.Index(s, p)
		if k < 0 {
			return false
		}
		s = s[k+len(p):]
	}
	return s == ""
}

// mustCore applies an event the engine has already validated; a refusal
// is a broken invariant.
func (e *Engine) mustCore(ev core.Event) {
	if err := e.core.Apply(ev); err != nil {
		panic("engine: core refused " + err.Error())
	}
}

// housekeeping runs every second: time limit actions and retention.
func (e *Engine) housekeeping(c *cycle) error {
	now := c.now
	nowMs := ms(now)
	for _, id := range sortedKeys(e.waits) { // in ID order: terminations are events
		w := e.waits[id]
		j := e.jobs[id]
		if j == nil || j.Status != StatusRunnable {
			delete(e.waits, id)
			continue
		}
		q := e.model.QueueNamed(j.Queue)
		if q == nil {
			continue
		}
		for _, a := range q.JobStateTimeLimitActions {
			if a.State == StatusRunnable && strings.HasPrefix(w.reason, a.Reason) && nowMs-w.since >= int64(a.MaxTimeSeconds)*1000 {
				if err := e.core.Apply(core.Terminate{Job: id}); err == nil {
					e.fail(c, j, "Terminated by JobStateTimeLimit action due to reason: "+a.Reason)
				}
				break
			}
		}
	}
	if now.Sub(e.lastPurge) >= time.Minute {
		e.lastPurge = now
		e.purge(c)
	}
	return nil
}

// purge forgets jobs that ended longer ago than the retention.
// Ended jobs are taken from the front of e.ended, which holds them in the
// order they ended, so a purge costs what it removes, not what is kept.
func (e *Engine) purge(c *cycle) {
	before := ms(c.now.Add(-e.opts.Retention))
	n := 0
	for ; n < len(e.ended) && e.ended[n].at < before; n++ {
		m := e.ended[n]
		id := m.id
		j := e.jobs[id]
		if j == nil && m.token != "" && e.tokens[m.token] == id {
			delete(e.tokens, m.token) // a job known only by its token
		}
		if j == nil || !terminal(j.Status) || j.EndedAt != m.at {
			continue
		}
		delete(e.jobs, id)
		e.describes.Forget(id)
		e.counts[j.Status]-- // the store's purge recounts after, with the jobs only it held
		if t := j.ClientToken; t != "" && e.tokens[t] == id {
			delete(e.tokens, t)
		}
	}
	e.ended = e.ended[n:]
	e.purgedBefore = before
	c.purgeBefore = before
}
