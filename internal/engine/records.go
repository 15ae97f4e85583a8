package engine

import (
	"strings"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/record"
)

// Resource kinds as stored.
const (
	kindPolicy = "scheduling-policy"
	kindEnv    = "service-environment"
	kindQueue  = "job-queue"
	kindShare  = "quota-share"
)

// Job statuses, as the engine's code names them.
const (
	StatusSubmitted = record.StatusSubmitted
	StatusRunnable  = record.StatusRunnable
	StatusScheduled = record.StatusScheduled
	StatusStarting  = record.StatusStarting
	StatusRunning   = record.StatusRunning
	StatusSucceeded = record.StatusSucceeded
	StatusFailed    = record.StatusFailed
)

func terminal(status string) bool { return record.Terminal(status) }

func dispatchedStatus(status string) bool {
	return status == StatusScheduled || status == StatusStarting || status == StatusRunning
}

type envRec struct {
	record.ServiceEnvironment
}

type queueRec struct {
	record.JobQueue
	env    string // service environment name
	quota  bool
	shares map[string]*shareRec
	// fifo: its policy has a fairsharePolicy, but it was stored sharing its
	// service environment with other queues, as it could before fair share
	// was scheduled; it stays FIFO (see fairOf).
	fifo bool
}

type shareRec struct {
	record.QuotaShare
	queue string
}

type policyRec struct {
	record.SchedulingPolicy
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

// base formats the ARNs of this server's resources.
func (e *Engine) base() arn.Base {
	return arn.Base{Partition: e.opts.Partition, Region: e.opts.Region, AccountID: e.opts.AccountID}
}

// ownName returns the name (or job ID) that nameOrArn gives: itself when
// it is no ARN, the resource's name when it is an ARN of this server of
// that kind. An ARN of another partition, region, account or kind names
// nothing here: "".
func (e *Engine) ownName(nameOrArn string, kind arn.Kind) string {
	if !strings.HasPrefix(nameOrArn, "arn:") {
		return nameOrArn
	}
	if p := e.base().Of(kind, ""); strings.HasPrefix(nameOrArn, p) {
		return nameOrArn[len(p):]
	}
	return ""
}

// jobID accepts a job ID or its ARN.
func (e *Engine) jobID(idOrArn string) string { return e.ownName(idOrArn, arn.ServiceJob) }
