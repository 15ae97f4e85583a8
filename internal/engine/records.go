package engine

import (
	"encoding/json"
	"strings"

	"github.com/sharq-dev/sharq/internal/core"
)

// Resource kinds as stored.
const (
	kindPolicy = "scheduling-policy"
	kindEnv    = "service-environment"
	kindQueue  = "job-queue"
	kindShare  = "quota-share"
)

// Job statuses.
const (
	StatusSubmitted = "SUBMITTED"
	StatusRunnable  = "RUNNABLE"
	StatusScheduled = "SCHEDULED"
	StatusStarting  = "STARTING"
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
)

func terminal(status string) bool { return status == StatusSucceeded || status == StatusFailed }

func dispatchedStatus(status string) bool {
	return status == StatusScheduled || status == StatusStarting || status == StatusRunning
}

// jobRec is a service job as the engine keeps it: the wire record plus what
// the engine needs to drive it, stored together as one JSON document.
type jobRec struct {
	ServiceJob
	Internal jobInternal `json:"sharq"`
}

type jobInternal struct {
	Queue        string           `json:"queue"` // queue name
	QueuedAt     int64            `json:"queuedAt"`
	Demand       []core.UnitCount `json:"demand"`
	Entries      int              `json:"entries"` // times entered RUNNABLE that count against retryStrategy.attempts
	AttemptID    string           `json:"attemptId,omitempty"`
	AttemptSeq   int              `json:"attemptSeq,omitempty"`
	DispatchedAt int64            `json:"dispatchedAt,omitempty"` // ns
	// WaitFor are the attempts preempted for the current attempt: it starts
	// once they have stopped, after a restart too.
	WaitFor     []string `json:"waitFor,omitempty"`
	ClientToken string   `json:"clientToken,omitempty"`
	RequestHash string   `json:"requestHash,omitempty"`
	EndedAt     int64    `json:"endedAt,omitempty"` // ms
	// WaitSince is when the job began to wait for its misconfiguration
	// statusReason (ms), for time limit actions across restarts.
	WaitSince int64 `json:"waitSince,omitempty"`
	// History is every status the job entered, oldest first.
	History []Transition `json:"history,omitempty"`
}

// Transition is a job entering a status.
type Transition struct {
	At     int64  `json:"at"` // ms
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

func (j *jobRec) retries() int {
	pc := j.PreemptionConfiguration
	if pc == nil || pc.PreemptionRetriesBeforeTermination == nil {
		return -1
	}
	return *pc.PreemptionRetriesBeforeTermination
}

// currentAttempt is the attempt record of the job's current attempt.
func (j *jobRec) currentAttempt() *Attempt {
	if len(j.Attempts) == 0 {
		return nil
	}
	return &j.Attempts[len(j.Attempts)-1]
}

type envRec struct {
	ServiceEnvironment
}

type queueRec struct {
	JobQueue
	env    string // service environment name
	quota  bool
	shares map[string]*shareRec
}

type shareRec struct {
	QuotaShare
	queue string
}

type policyRec struct {
	SchedulingPolicy
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("engine: marshal record: " + err.Error())
	}
	return b
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

func (e *Engine) arn(resource string) string {
	return "arn:" + e.opts.Partition + ":batch:" + e.opts.Region + ":" + e.opts.AccountID + ":" + resource
}

func (e *Engine) trainingJobArn(name string) string {
	return "arn:" + e.opts.Partition + ":sagemaker:" + e.opts.Region + ":" + e.opts.AccountID + ":training-job/" + name
}

// ownName returns the name (or job ID) that nameOrArn gives: itself when
// it is no ARN, the resource's name when it is an ARN of this server of
// that kind. An ARN of another partition, region, account or kind names
// nothing here: "".
func (e *Engine) ownName(nameOrArn, kind string) string {
	if !strings.HasPrefix(nameOrArn, "arn:") {
		return nameOrArn
	}
	if p := e.arn(kind + "/"); strings.HasPrefix(nameOrArn, p) {
		return nameOrArn[len(p):]
	}
	return ""
}

// jobID accepts a job ID or its ARN.
func (e *Engine) jobID(idOrArn string) string { return e.ownName(idOrArn, "service-job") }
