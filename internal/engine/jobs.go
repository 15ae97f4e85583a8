package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jsonlite"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// readPayload reads a submission's CreateTrainingJob request, once: the
// request (req when the caller parsed payload already, else payload
// parsed here) and the capacity it asks for, the instance type × count,
// or each instance group's, summed per type. Every submission goes
// through it, so it is also where a payload is refused for what
// CreateTrainingJob or sharq would refuse at submit (a member
// CreateTrainingJob does not define, Pipe mode); jobs already stored are
// not checked again. The request is read-only: it may be another
// submission's.
func readPayload(payload string, req *trainingjob.Request) (*trainingjob.Request, []record.UnitCount, error) {
	if m, ok := payloadMemo.get(payload); ok {
		return m.req, slices.Clone(m.demand), nil
	}
	if req == nil {
		var err error
		if req, err = trainingjob.ParseString(payload); err != nil {
			return nil, nil, payloadError(err)
		}
	}
	if err := req.CheckSubmission(); err != nil {
		return nil, nil, payloadError(err)
	}
	demand, err := req.Demand()
	if err != nil {
		return nil, nil, payloadError(err)
	}
	out := make([]record.UnitCount, len(demand))
	for i, d := range demand {
		out[i] = record.UnitCount{Unit: d.Type, Count: d.Count}
	}
	payloadMemo.put(payload, parsedPayload{req, out})
	return req, slices.Clone(out), nil
}

// payloadMemo remembers recent small payloads parsed: jobs submitted from
// one template (as a simulation's are) share a payload, and parsing it is
// most of a submission's work, and of an attempt's start.
var payloadMemo = newPayloadCache(1024, 4096)

// parsedPayload is a payload accepted at submit, as readPayload read it.
type parsedPayload struct {
	req    *trainingjob.Request
	demand []record.UnitCount
}

// payloadCache maps payloads of at most maxLen bytes to their reading, up
// to size entries; when full it starts over.
type payloadCache struct {
	mu      sync.Mutex
	size    int
	maxLen  int
	entries map[string]parsedPayload
}

func newPayloadCache(size, maxLen int) *payloadCache {
	return &payloadCache{size: size, maxLen: maxLen, entries: map[string]parsedPayload{}}
}

func (c *payloadCache) get(payload string) (parsedPayload, bool) {
	if len(payload) > c.maxLen {
		return parsedPayload{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.entries[payload]
	return p, ok
}

// getBytes is get of a payload held in bytes: the request it was read
// as.
func (c *payloadCache) getBytes(payload []byte) (*trainingjob.Request, bool) {
	if len(payload) > c.maxLen {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.entries[string(payload)]
	return p.req, ok
}

func (c *payloadCache) put(payload string, p parsedPayload) {
	if len(payload) > c.maxLen {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.size {
		clear(c.entries)
	}
	c.entries[payload] = p
}

// coreUnits is a job's demand as the core counts it.
func coreUnits(us []record.UnitCount) []core.UnitCount {
	out := make([]core.UnitCount, len(us))
	for i, u := range us {
		out[i] = core.UnitCount(u)
	}
	return out
}

// payloadError is a refused payload as the API names it.
func payloadError(err error) error {
	var pe *trainingjob.Error
	if errors.As(err, &pe) {
		return invalidf("%s", pe.Named("serviceRequestPayload"))
	}
	return invalidf("serviceRequestPayload: %v", err)
}

func capacityUsage(us []record.UnitCount) []record.CapacityUsage {
	out := make([]record.CapacityUsage, len(us))
	for i, u := range us {
		out[i] = record.CapacityUsage{CapacityUnit: u.Unit, Quantity: float64(u.Count)}
	}
	return out
}

// requestHash identifies a submission for clientToken idempotency. Jobs
// keep it, so its encoding is frozen: a retry after an upgrade must hash
// as the submission it repeats did. The encoding is what json.Marshal made
// of the first release's struct of the request (field names as keys,
// HTML-escaped strings, clientToken always empty), written out by hand
// because reflection cost more than the rest of a submission's checks.
func requestHash(in SubmitServiceJobInput) string {
	var arr [2048]byte
	b := append(arr[:0], `{"JobName":`...)
	b = jsonlite.AppendString(b, in.JobName)
	b = append(b, `,"JobQueue":`...)
	b = jsonlite.AppendString(b, in.JobQueue)
	b = append(b, `,"ServiceJobType":`...)
	b = jsonlite.AppendString(b, in.ServiceJobType)
	b = append(b, `,"ServiceRequestPayload":`...)
	b = jsonlite.AppendString(b, in.ServiceRequestPayload)
	b = append(b, `,"ClientToken":"","QuotaShareName":`...)
	b = jsonlite.AppendString(b, in.QuotaShareName)
	b = append(b, `,"ShareIdentifier":`...)
	b = jsonlite.AppendString(b, in.ShareIdentifier)
	b = append(b, `,"SchedulingPriority":`...)
	b = appendIntOrNull(b, in.SchedulingPriority)
	b = append(b, `,"PreemptionConfiguration":`...)
	if p := in.PreemptionConfiguration; p == nil {
		b = append(b, "null"...)
	} else if p.PreemptionRetriesBeforeTermination == nil {
		b = append(b, "{}"...)
	} else {
		b = append(b, `{"preemptionRetriesBeforeTermination":`...)
		b = strconv.AppendInt(b, int64(*p.PreemptionRetriesBeforeTermination), 10)
		b = append(b, '}')
	}
	b = append(b, `,"RetryStrategy":`...)
	if r := in.RetryStrategy; r == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"attempts":`...)
		b = strconv.AppendInt(b, int64(r.Attempts), 10)
		if len(r.EvaluateOnExit) > 0 {
			b = append(b, `,"evaluateOnExit":[`...)
			for i, e := range r.EvaluateOnExit {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"action":`...)
				b = jsonlite.AppendString(b, e.Action)
				if e.OnStatusReason != "" {
					b = append(b, `,"onStatusReason":`...)
					b = jsonlite.AppendString(b, e.OnStatusReason)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `,"TimeoutConfig":`...)
	if t := in.TimeoutConfig; t == nil {
		b = append(b, "null"...)
	} else if t.AttemptDurationSeconds == 0 {
		b = append(b, "{}"...)
	} else {
		b = append(b, `{"attemptDurationSeconds":`...)
		b = strconv.AppendInt(b, int64(t.AttemptDurationSeconds), 10)
		b = append(b, '}')
	}
	b = append(b, `,"Tags":`...)
	if in.Tags == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(in.Tags)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonlite.AppendString(b, k)
			b = append(b, ':')
			b = jsonlite.AppendString(b, in.Tags[k])
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func appendIntOrNull(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func (e *Engine) SubmitServiceJob(ctx context.Context, in SubmitServiceJobInput) (record.Job, error) {
	req, demand, err := readPayload(in.ServiceRequestPayload, in.Request)
	if err != nil {
		return record.Job{}, err
	}
	if err := e.checkRunnable(req); err != nil {
		return record.Job{}, err
	}
	hash := requestHash(in)
	// The token of a job that ended before this start names a job that is
	// only in the store: read it here, off the loop.
	var stored *record.Job
	if t := in.ClientToken; t != "" {
		e.rlock()
		id, known := e.tokens[t]
		unread := known && e.jobs[id] == nil
		e.mu.RUnlock()
		if unread {
			if stored, err = storedJob(e.opts.Store.Job(ctx, id)); err != nil {
				return record.Job{}, err
			}
		}
	}
	s := &submission{in: in, demand: demand, hash: hash, stored: stored}
	err = e.do(ctx, s)
	return s.out, err
}

// submission is a SubmitServiceJob checked off the loop, for a cycle to
// apply (submit): the request, its demand and hash, the job of its
// clientToken read from the store, and the job it made or found.
type submission struct {
	in     SubmitServiceJobInput
	demand []record.UnitCount
	hash   string
	stored *record.Job
	out    record.Job
}

func (s *submission) apply(e *Engine, c *cycle) error { return e.submit(c, s) }

// submit applies a submission in a cycle: it answers with the job of its
// clientToken when there is one, else makes and queues a new job.
func (e *Engine) submit(c *cycle, s *submission) error {
	if id, ok := e.tokens[s.in.ClientToken]; ok && s.in.ClientToken != "" {
		j := e.jobs[id]
		if j == nil && s.stored != nil && s.stored.JobID == id {
			e.keepJob(s.stored)
			j = s.stored
		}
		// No job: it was forgotten meanwhile, and its token with it.
		if j != nil {
			if j.RequestHash != s.hash {
				return invalidf("clientToken %s was already used for a different request", s.in.ClientToken)
			}
			s.out = *j
			return nil
		}
	}
	j, err := e.newJob(c, s.in, "", s.demand)
	if err != nil {
		return err
	}
	j.RequestHash = s.hash
	s.out = *j
	return nil
}

// checkRunnable asks an executor that can tell whether the payload can run
// on it; a payload that cannot is refused now, as a client error, instead
// of failing when it starts.
func (e *Engine) checkRunnable(req *trainingjob.Request) error {
	c, ok := e.opts.Executor.(executor.SubmitChecker)
	if !ok {
		return nil
	}
	if err := c.CheckSubmit(req); err != nil {
		return invalidf("serviceRequestPayload cannot run on this server: %v", err)
	}
	return nil
}

// newJob makes and queues a job with the ID given or, when it is "",
// Options.NewID's: asked for only once the submission is valid.
func (e *Engine) newJob(c *cycle, in SubmitServiceJobInput, id string, demand []record.UnitCount) (*record.Job, error) {
	q, err := e.findQueue(in.JobQueue)
	if err != nil {
		return nil, err
	}
	if err := e.model.Accepts(q, in.QuotaShareName, in.ShareIdentifier); err != nil {
		return nil, modelErr(err)
	}
	queued := max(c.now.UnixNano(), e.lastQ+1)
	if id == "" {
		id = e.opts.NewID()
	}
	prio := 0
	if in.SchedulingPriority != nil {
		prio = *in.SchedulingPriority
	}
	j := &record.Job{
		JobID: id, JobName: in.JobName, JobArn: e.base().ServiceJob(id), JobQueue: q.JobQueueArn,
		ServiceJobType: in.ServiceJobType, Status: StatusSubmitted, CreatedAt: queued / 1e6,
		SchedulingPriority: prio, QuotaShareName: in.QuotaShareName, ShareIdentifier: in.ShareIdentifier,
		ServiceRequestPayload: in.ServiceRequestPayload, RetryStrategy: in.RetryStrategy, TimeoutConfig: in.TimeoutConfig,
		PreemptionConfiguration: in.PreemptionConfiguration, Tags: in.Tags, CapacityUsage: capacityUsage(demand),
		Queue: q.JobQueueName, QueuedAt: queued, Demand: demand, Entries: 1, ClientToken: in.ClientToken, Owner: in.Owner,
		// Room for the usual life (SUBMITTED, RUNNABLE, SCHEDULED,
		// STARTING, RUNNING, an end) in one allocation.
		History: append(make([]record.Transition, 0, 6), record.Transition{At: queued / 1e6, Status: StatusSubmitted}),
	}
	if err := coreErr(e.core.Apply(e.submitEvent(j))); err != nil {
		return nil, err
	}
	e.lastQ = queued
	e.jobs[id] = j
	e.counts[StatusSubmitted]++
	if in.ClientToken != "" {
		e.tokens[in.ClientToken] = id
	}
	c.submitted = append(c.submitted, j)
	e.touch(c, j)
	return j, nil
}

func (e *Engine) submitEvent(j *record.Job) core.Submit {
	return core.Submit{
		Job: j.JobID, Queue: j.Queue, Share: cmp.Or(j.QuotaShareName, j.ShareIdentifier), Demand: coreUnits(j.Demand),
		Priority: j.SchedulingPriority, QueuedAt: j.QueuedAt, PreemptionRetries: j.Retries(),
		Preempted: preemptedCount(j),
	}
}

func preemptedCount(j *record.Job) int {
	if j.PreemptionSummary == nil {
		return 0
	}
	return j.PreemptionSummary.PreemptedAttemptCount
}

// asideJobs are the jobs a change names that memory did not hold (they
// ended before this start), read from the store before the change goes to
// the loop, so that no cycle waits for the store: by ID, with the error of
// the read. A job the store does not have is not among them.
type asideJobs map[string]asideJob

type asideJob struct {
	job *record.Job
	err error
}

// readAside reads from the store, holding no lock, the jobs named (by ID
// or ARN: idOf of each) that memory does not hold; nil when it holds them
// all.
func readAside[T any](ctx context.Context, e *Engine, named []T, idOf func(T) string) asideJobs {
	if len(named) == 0 {
		return nil
	}
	var missing []string
	e.rlock()
	for _, n := range named {
		if id := e.jobID(idOf(n)); e.jobs[id] == nil {
			missing = append(missing, id)
		}
	}
	e.mu.RUnlock()
	var aside asideJobs
	for _, id := range missing {
		j, err := storedJob(e.opts.Store.Job(ctx, id))
		if j == nil && err == nil {
			continue
		}
		if aside == nil {
			aside = asideJobs{}
		}
		aside[id] = asideJob{j, err}
	}
	return aside
}

// readAsideOne is readAside of one job.
func (e *Engine) readAsideOne(ctx context.Context, idOrArn string) asideJobs {
	return readAside(ctx, e, []string{idOrArn}, jobRef)
}

// jobRef is a job named by its ID or ARN, as requests name them.
func jobRef(s string) string { return s }

// knownJob finds the job a change names by ID or ARN: in memory, or else
// among those read aside, unless a purge has forgotten it since. With keep
// (mu held to write), one read aside is kept in memory, so that a change
// to it is committed.
func (e *Engine) knownJob(idOrArn string, aside asideJobs, keep bool) (*record.Job, error) {
	id := e.jobID(idOrArn)
	if j := e.jobs[id]; j != nil {
		return j, nil
	}
	a := aside[id]
	if a.err != nil {
		return nil, a.err
	}
	if a.job == nil || a.job.EndedAt < e.purgedBefore {
		return nil, notFoundf("Job %s does not exist", idOrArn)
	}
	if keep {
		e.keepJob(a.job)
	}
	return a.job, nil
}

// readStored reads from the store, holding no lock, a job that memory did
// not hold when the caller looked, under the read lock, and saw purges
// reach purgedBefore: a job that ended before it is gone.
func (e *Engine) readStored(ctx context.Context, idOrArn string, purgedBefore int64) (*record.Job, error) {
	j, err := storedJob(e.opts.Store.Job(ctx, e.jobID(idOrArn)))
	if err != nil {
		return nil, err
	}
	if j == nil || j.EndedAt < purgedBefore {
		return nil, notFoundf("Job %s does not exist", idOrArn)
	}
	return j, nil
}

func (e *Engine) UpdateServiceJob(ctx context.Context, id string, priority int) (record.Job, error) {
	aside := e.readAsideOne(ctx, id)
	var out record.Job
	err := e.do(ctx, changeFunc(func(c *cycle) error {
		var err error
		out, err = e.setPriority(c, id, priority, aside)
		return err
	}))
	return out, err
}

func (e *Engine) setPriority(c *cycle, id string, priority int, aside asideJobs) (record.Job, error) {
	j, err := e.knownJob(id, aside, false)
	if err != nil {
		return record.Job{}, err
	}
	if terminal(j.Status) {
		return record.Job{}, invalidf("Job %s is in a terminal state (%s); its priority cannot change", j.JobID, j.Status)
	}
	if err := coreErr(e.core.Apply(core.SetPriority{Job: j.JobID, Priority: priority})); err != nil {
		return record.Job{}, err
	}
	j.SchedulingPriority = priority
	e.touch(c, j)
	return *j, nil
}

func (e *Engine) TerminateServiceJob(ctx context.Context, id, reason string) error {
	aside := e.readAsideOne(ctx, id)
	return e.do(ctx, changeFunc(func(c *cycle) error { return e.terminate(c, id, reason, aside) }))
}

func (e *Engine) terminate(c *cycle, id, reason string, aside asideJobs) error {
	j, err := e.knownJob(id, aside, false)
	if err != nil {
		return err
	}
	if terminal(j.Status) {
		return nil
	}
	if err := coreErr(e.core.Apply(core.Terminate{Job: j.JobID})); err != nil {
		return err
	}
	j.IsTerminated = true
	e.fail(c, j, reason)
	return nil
}

func (e *Engine) TerminateServiceJobs(ctx context.Context, ids []string, reason string) ([]string, []TerminateError, error) {
	aside := readAside(ctx, e, ids, jobRef)
	ok := []string{}
	bad := []TerminateError{}
	err := e.do(ctx, changeFunc(func(c *cycle) error {
		for _, id := range ids {
			if err := e.terminate(c, id, reason, aside); err != nil {
				bad = append(bad, TerminateError{Job: id, Message: ErrorMessage(err)})
				continue
			}
			ok = append(ok, e.jobID(id))
		}
		return nil
	}))
	return ok, bad, err
}

// DescribeServiceJob describes a job: one kept for describes without the
// lock (reads), else one in memory under the read lock, else, after the
// lock is released, the store's: an ended job's, or for a live one, which a
// cycle committed meanwhile, memory's again.
func (e *Engine) DescribeServiceJob(ctx context.Context, idOrArn string) (record.Job, error) {
	id := e.jobID(idOrArn)
	if j, ok := e.describes.Describe(id); ok {
		e.readWaits.unlocked.Add(1)
		return j, nil
	}
	e.rlock()
	if j := e.jobs[id]; j != nil {
		e.describes.Keep(j, e.core)
		v := e.view(j)
		e.mu.RUnlock()
		return v, nil
	}
	purged := e.purgedBefore
	e.mu.RUnlock()
	j, err := e.readStored(ctx, idOrArn, purged)
	if err != nil {
		return record.Job{}, err
	}
	if !terminal(j.Status) {
		// A cycle committed it while the store was read: memory holds it
		// now, and why it waits, which the store does not.
		e.rlock()
		defer e.mu.RUnlock()
		if live := e.jobs[id]; live != nil {
			return e.view(live), nil
		}
	}
	return *j, nil
}

// view is a job as clients see it: a RUNNABLE job's statusReason is why it
// waits right now.
func (e *Engine) view(j *record.Job) record.Job {
	sj := record.Detached(j)
	if sj.Status == StatusRunnable {
		if r, ok := e.core.WaitReason(j.JobID); ok {
			sj.StatusReason = r.String()
		}
	}
	return sj
}

// JobPosition reports a RUNNABLE job's place in its share and why it waits.
func (e *Engine) JobPosition(id string) (core.JobStatus, bool) {
	e.rlock()
	defer e.mu.RUnlock()
	return e.core.Job(e.jobID(id))
}

// QueueSnapshot is a job queue's front and use at one moment.
type QueueSnapshot struct {
	At    int64      // epoch ms
	Front []FrontJob // the queue's first RUNNABLE jobs, in dispatch order
	// Quota tells a queue with quota shares; only such a queue has these:
	Quota       bool
	ShareFronts map[string][]FrontJob // each share's first RUNNABLE job
	// Total is the capacity in use, by unit in the order first seen.
	Total []record.CapacityUsage
	// Shares are those using capacity, most first (then by name).
	Shares []ShareCapacity
}

// FrontJob is a RUNNABLE job at the front.
type FrontJob struct {
	JobArn    string
	CreatedAt int64 // epoch ms; 0 when not known
}

// ShareCapacity is one share's capacity in use.
type ShareCapacity struct {
	Share string
	Usage []record.CapacityUsage
}

func (e *Engine) GetJobQueueSnapshot(ctx context.Context, jobQueue string) (QueueSnapshot, error) {
	e.rlock()
	defer e.mu.RUnlock()
	q, err := e.findQueue(jobQueue)
	if err != nil {
		return QueueSnapshot{}, err
	}
	snap := QueueSnapshot{At: ms(e.opts.Clock.Now()), Quota: q.Quota()}
	for _, id := range e.core.QueueFront(q.JobQueueName, 100) {
		snap.Front = append(snap.Front, e.frontJob(id))
	}
	total := map[string]int{}
	var order []string
	for _, su := range e.core.Usage(q.JobQueueName) {
		var cu []record.CapacityUsage
		used := 0
		for _, u := range su.Units {
			if u.Used > 0 {
				cu = append(cu, record.CapacityUsage{CapacityUnit: u.Unit, Quantity: float64(u.Used)})
				if _, seen := total[u.Unit]; !seen {
					order = append(order, u.Unit)
				}
				total[u.Unit] += u.Used
				used += u.Used
			}
		}
		if q.Quota() && used > 0 {
			snap.Shares = append(snap.Shares, ShareCapacity{Share: su.Share, Usage: cu})
		}
	}
	for _, u := range order {
		snap.Total = append(snap.Total, record.CapacityUsage{CapacityUnit: u, Quantity: float64(total[u])})
	}
	if q.Quota() {
		sortShareCapacity(snap.Shares)
		snap.ShareFronts = map[string][]FrontJob{}
		for _, name := range q.ShareNames() {
			snap.ShareFronts[name] = []FrontJob{}
			for _, id := range e.core.ShareFront(q.JobQueueName, name, 1) {
				snap.ShareFronts[name] = append(snap.ShareFronts[name], e.frontJob(id))
			}
		}
	}
	return snap, nil
}

func (e *Engine) frontJob(id string) FrontJob {
	fj := FrontJob{JobArn: e.base().ServiceJob(id)}
	if j := e.jobs[id]; j != nil {
		fj.CreatedAt = j.CreatedAt
	}
	return fj
}

// sortShareCapacity orders shares by total usage, descending, then name.
func sortShareCapacity(top []ShareCapacity) {
	sum := func(q ShareCapacity) float64 {
		t := 0.0
		for _, c := range q.Usage {
			t += c.Quantity
		}
		return t
	}
	slices.SortFunc(top, func(a, b ShareCapacity) int {
		if c := cmp.Compare(sum(b), sum(a)); c != 0 {
			return c
		}
		return strings.Compare(a.Share, b.Share)
	})
}
