// Package batchmodel is AWS Batch's resource model as this server keeps it:
// scheduling policies, service environments, job queues and quota shares,
// checked against AWS's rules and limits and refused in AWS's words.
//
// A Model is a plain value with no lock, clock or I/O of its own. An
// operation checks a request against it and returns a Change: the core
// events that bring the scheduler along, the records to store, and what
// Commit then installs in the model. The engine runs each operation in
// its loop, applies the events to the core, commits the change and stores
// its records; a change the core refuses is dropped, and the model stays
// as it was.
package batchmodel

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
)

// Resource kinds, as the store keeps them.
const (
	KindPolicy = "scheduling-policy"
	KindEnv    = "service-environment"
	KindQueue  = "job-queue"
	KindShare  = "quota-share"
)

// States of queues, environments and shares.
const (
	Enabled  = "ENABLED"
	Disabled = "DISABLED"
)

const (
	statusValid   = "VALID"
	typeSageMaker = "SAGEMAKER_TRAINING"
	msgExists     = "Object already exists"
	// queueHealthy is a valid job queue's statusReason, as AWS words it.
	queueHealthy = "JobQueue Healthy"
)

// MaxMinimumRuntimeSeconds is the longest minimum runtime before preemption
// a quota share may have: a year.
const MaxMinimumRuntimeSeconds = 365 * 24 * 3600

// Error codes: what kind of client error an Error is.
const (
	Invalid  = "invalid"
	NotFound = "not_found"
	Conflict = "conflict"
)

// Error is a refusal, whose Message is shown to the client as is.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) *Error  { return errorf(Invalid, format, args...) }
func notFoundf(format string, args ...any) *Error { return errorf(NotFound, format, args...) }
func conflictf(format string, args ...any) *Error { return errorf(Conflict, format, args...) }

// Config sets what the model's ARNs are made of and AWS's limits.
type Config struct {
	Base arn.Base
	// MaxSharesPerQueue caps quota shares per job queue (0: AWS's 20).
	MaxSharesPerQueue int
	// MaxCapacityLimits caps capacity limits per share and per service
	// environment (0: AWS's 5).
	MaxCapacityLimits int
}

// Model holds the resources. Its operations check a request and return a
// Change without changing the model; Commit installs a Change.
type Model struct {
	cfg      Config
	policies map[string]*Policy // by ARN
	envs     map[string]*Env    // by name
	queues   map[string]*Queue  // by name
}

// New returns an empty model.
func New(cfg Config) *Model {
	cfg.MaxSharesPerQueue = cmp.Or(cfg.MaxSharesPerQueue, 20)
	cfg.MaxCapacityLimits = cmp.Or(cfg.MaxCapacityLimits, 5)
	return &Model{cfg: cfg, policies: map[string]*Policy{}, envs: map[string]*Env{}, queues: map[string]*Queue{}}
}

// Policy is a scheduling policy.
type Policy struct {
	record.SchedulingPolicy
}

// Env is a service environment.
type Env struct {
	record.ServiceEnvironment
}

// Queue is a job queue with its quota shares.
type Queue struct {
	record.JobQueue
	env    string // service environment name
	quota  bool
	shares map[string]*Share
	// fifo: its policy has a fairsharePolicy, but it was stored sharing its
	// service environment with other queues, as it could before fair share
	// was scheduled; it stays FIFO (see fairOf).
	fifo bool
}

// EnvName is the name of the queue's service environment.
func (q *Queue) EnvName() string { return q.env }

// Quota tells whether the queue schedules by quota share.
func (q *Queue) Quota() bool { return q.quota }

// Share is the queue's quota share of that name, or nil.
func (q *Queue) Share(name string) *Share { return q.shares[name] }

// ShareNames lists the queue's quota shares by name.
func (q *Queue) ShareNames() []string { return slices.Sorted(maps.Keys(q.shares)) }

// Share is a quota share.
type Share struct {
	record.QuotaShare
	queue string // its job queue's name
}

// Put is a record to store.
type Put struct {
	Kind   string
	ARN    string
	Record record.Record
}

// Change is what one operation changes: the core events to apply, in
// order; Undo, the events that put the core back when one of several is
// refused; the records to store and the ARNs to delete from the store.
// Commit installs the rest in the model.
type Change struct {
	Events  []core.Event
	Undo    []core.Event
	Puts    []Put
	Deleted []string

	policy *Policy
	env    *Env
	queue  *Queue
	share  *Share
	del    deletion
}

// deletion names a resource a change deletes.
type deletion struct {
	kind, name, queue string
}

// Commit installs a change whose events the core has accepted.
func (m *Model) Commit(ch Change) {
	if p := ch.policy; p != nil {
		m.policies[p.Arn] = p
	}
	if se := ch.env; se != nil {
		m.envs[se.ServiceEnvironmentName] = se
	}
	if q := ch.queue; q != nil {
		m.queues[q.JobQueueName] = q
	}
	if s := ch.share; s != nil {
		m.queues[s.queue].shares[s.QuotaShareName] = s
	}
	switch ch.del.kind {
	case KindPolicy:
		delete(m.policies, ch.del.name)
	case KindEnv:
		delete(m.envs, ch.del.name)
	case KindQueue:
		delete(m.queues, ch.del.name)
	case KindShare:
		delete(m.queues[ch.del.queue].shares, ch.del.name)
	}
}

// --- lookups

// OwnName returns the name (or job ID) that nameOrArn gives: itself when
// it is no ARN, the resource's name when it is an ARN of base of that
// kind. An ARN of another partition, region, account or kind names
// nothing here: "".
func OwnName(base arn.Base, nameOrArn string, kind arn.Kind) string {
	if !strings.HasPrefix(nameOrArn, "arn:") {
		return nameOrArn
	}
	if p := base.Of(kind, ""); strings.HasPrefix(nameOrArn, p) {
		return nameOrArn[len(p):]
	}
	return ""
}

func (m *Model) ownName(nameOrArn string, kind arn.Kind) string {
	return OwnName(m.cfg.Base, nameOrArn, kind)
}

// resourceName takes a name or an ARN whose resource part is
// "<kind>/<name>" and returns the name.
func resourceName(nameOrArn, kind string) string {
	if !strings.HasPrefix(nameOrArn, "arn:") {
		return nameOrArn
	}
	parts := strings.SplitN(nameOrArn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	res := parts[5]
	if !strings.HasPrefix(res, kind+"/") {
		return ""
	}
	return strings.TrimPrefix(res, kind+"/")
}

// Queue finds a job queue by name or ARN.
func (m *Model) Queue(nameOrArn string) (*Queue, error) {
	q := m.queues[m.ownName(nameOrArn, arn.JobQueue)]
	if q == nil {
		return nil, notFoundf("Job queue %s does not exist", nameOrArn)
	}
	return q, nil
}

// QueueNamed is the job queue of that name, or nil.
func (m *Model) QueueNamed(name string) *Queue { return m.queues[name] }

// Queues lists the job queues by name.
func (m *Model) Queues() []*Queue {
	qs := make([]*Queue, 0, len(m.queues))
	for _, q := range m.queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *Queue) int { return strings.Compare(a.JobQueueName, b.JobQueueName) })
	return qs
}

// EnvNames lists the service environments by name.
func (m *Model) EnvNames() []string { return slices.Sorted(maps.Keys(m.envs)) }

func (m *Model) findEnv(nameOrArn string) (*Env, error) {
	se := m.envs[m.ownName(nameOrArn, arn.ServiceEnvironment)]
	if se == nil {
		return nil, notFoundf("Service environment %s does not exist", nameOrArn)
	}
	return se, nil
}

// findShare resolves a quota share ARN: .../job-queue/<queue>/quota-share/<name>.
func (m *Model) findShare(shareArn string) (*Queue, *Share, error) {
	rest := m.ownName(shareArn, arn.JobQueue)
	qn, sn, ok := strings.Cut(rest, "/quota-share/")
	if ok {
		if q := m.queues[qn]; q != nil {
			if s := q.shares[sn]; s != nil {
				return q, s, nil
			}
		}
	}
	return nil, nil, notFoundf("Quota share %s does not exist", shareArn)
}

// Accepts tells whether job queue q takes a job submitted with that quota
// share name or share identifier, as AWS words a refusal.
func (m *Model) Accepts(q *Queue, quotaShareName, shareIdentifier string) error {
	if q.State != Enabled {
		return invalidf("Job queue %s is DISABLED and does not accept jobs", q.JobQueueName)
	}
	fair := m.FairQueue(q)
	switch {
	case q.quota && quotaShareName == "":
		return invalidf("quotaShareName must be specified: job queue %s has a quota share scheduling policy", q.JobQueueName)
	case !q.quota && quotaShareName != "":
		return invalidf("quotaShareName must not be specified: job queue %s does not have a quota share scheduling policy", q.JobQueueName)
	case !fair && shareIdentifier != "":
		return invalidf("shareIdentifier must not be specified: job queue %s does not have a fair share scheduling policy", q.JobQueueName)
	case fair && shareIdentifier == "":
		return invalidf("shareIdentifier must be specified: job queue %s has a fair share scheduling policy", q.JobQueueName)
	}
	if q.quota {
		s := q.shares[quotaShareName]
		if s == nil {
			return notFoundf("Quota share %s does not exist in job queue %s", quotaShareName, q.JobQueueName)
		}
		if s.State != Enabled {
			return invalidf("Quota share %s is DISABLED and does not accept jobs", quotaShareName)
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
