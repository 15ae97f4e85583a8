package record

import "strings"

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

// Terminal tells whether a job in status has ended.
func Terminal(status string) bool { return status == StatusSucceeded || status == StatusFailed }

// Job is a service job: what its client asked for, where it stands, and
// what the engine needs to drive it across restarts.
type Job struct {
	// What was submitted.
	JobID                   string                      `json:"id"`
	JobName                 string                      `json:"name"`
	JobArn                  string                      `json:"arn"`
	JobQueue                string                      `json:"queueArn"`
	ServiceJobType          string                      `json:"type"`
	SchedulingPriority      int                         `json:"priority"`
	QuotaShareName          string                      `json:"share,omitempty"`
	ShareIdentifier         string                      `json:"shareId,omitempty"`
	ServiceRequestPayload   string                      `json:"payload,omitempty"`
	RetryStrategy           *RetryStrategy              `json:"retry,omitempty"`
	TimeoutConfig           *TimeoutConfig              `json:"timeout,omitempty"`
	PreemptionConfiguration *JobPreemptionConfiguration `json:"preemption,omitempty"`
	Tags                    map[string]string           `json:"tags,omitempty"`
	CapacityUsage           []CapacityUsage             `json:"usage"`
	ClientToken             string                      `json:"clientToken,omitempty"`
	// Owner is who submitted it: the principal of the access key that
	// signed the submission; empty when the server checks no signatures.
	Owner string `json:"owner,omitempty"`
	// RequestHash identifies the submission, to tell a retry with the same
	// clientToken from a different request.
	RequestHash string `json:"requestHash,omitempty"`

	// Where it stands. Times are epoch milliseconds.
	Status            string             `json:"status"`
	StatusReason      string             `json:"reason,omitempty"`
	CreatedAt         int64              `json:"createdAt"`
	ScheduledAt       int64              `json:"scheduledAt,omitempty"`
	StartedAt         int64              `json:"startedAt,omitempty"`
	StoppedAt         int64              `json:"stoppedAt,omitempty"`
	EndedAt           int64              `json:"endedAt,omitempty"`
	IsTerminated      bool               `json:"terminated,omitempty"`
	Attempts          []Attempt          `json:"attempts,omitempty"`
	LatestAttempt     *LatestAttempt     `json:"latest,omitempty"`
	PreemptionSummary *PreemptionSummary `json:"preempted,omitempty"`
	// History is every status the job entered, oldest first.
	History []Transition `json:"history,omitempty"`

	// What the engine needs to drive it.
	Queue    string      `json:"queue"`    // job queue name
	QueuedAt int64       `json:"queuedAt"` // ns: its place in the queue
	Demand   []UnitCount `json:"demand"`
	// Entries counts the times it entered RUNNABLE that count against
	// retryStrategy.attempts.
	Entries      int    `json:"entries"`
	AttemptID    string `json:"attemptId,omitempty"`
	AttemptSeq   int    `json:"attemptSeq,omitempty"`
	DispatchedAt int64  `json:"dispatchedAt,omitempty"` // ns
	// WaitFor are the attempts preempted for the current attempt: it starts
	// once they have stopped, after a restart too.
	WaitFor []string `json:"waitFor,omitempty"`
	// WaitSince is when the job began to wait for its misconfiguration
	// statusReason, for time limit actions across restarts.
	WaitSince int64 `json:"waitSince,omitempty"`
}

// UnitCount is a count of one capacity unit.
type UnitCount struct {
	Unit  string `json:"unit"`
	Count int    `json:"n"`
}

// EvaluateOnExit is one retry rule.
type EvaluateOnExit struct {
	Action         string `json:"action"`
	OnStatusReason string `json:"onReason,omitempty"`
}

// RetryStrategy is a job's retry strategy.
type RetryStrategy struct {
	Attempts       int              `json:"attempts"`
	EvaluateOnExit []EvaluateOnExit `json:"onExit,omitempty"`
}

// TimeoutConfig bounds an attempt's duration.
type TimeoutConfig struct {
	AttemptDurationSeconds int `json:"attemptSeconds,omitempty"`
}

// JobPreemptionConfiguration bounds how often a job may be preempted.
type JobPreemptionConfiguration struct {
	PreemptionRetriesBeforeTermination *int `json:"retries,omitempty"`
}

// ServiceResourceID names the training job of an attempt.
type ServiceResourceID struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Attempt is one try of a service job.
type Attempt struct {
	ServiceResourceID ServiceResourceID `json:"resource"`
	StartedAt         int64             `json:"startedAt,omitempty"`
	StoppedAt         int64             `json:"stoppedAt,omitempty"`
	StatusReason      string            `json:"reason,omitempty"`
}

// StoppingSince marks the reason of a preempted attempt whose processes
// are still in their grace period ("...; stopping since <time>, up to 40s
// grace period"); it is cut off, and StoppedAt set, when the executor
// reports them gone.
const StoppingSince = "; stopping since "

// Stopping tells whether a was preempted and its processes still stop.
func (a Attempt) Stopping() bool {
	return a.StoppedAt == 0 && strings.Contains(a.StatusReason, StoppingSince)
}

// LatestAttempt points at the current attempt's training job.
type LatestAttempt struct {
	ServiceResourceID ServiceResourceID `json:"resource"`
}

// PreemptionSummary counts preemptions; recent ones newest first.
type PreemptionSummary struct {
	PreemptedAttemptCount   int       `json:"count"`
	RecentPreemptedAttempts []Attempt `json:"recent"`
}

// Transition is a job entering a status.
type Transition struct {
	At     int64  `json:"at"` // ms
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Retries is the job's preemptionRetriesBeforeTermination, -1 when it has
// none (no limit).
func (j *Job) Retries() int {
	pc := j.PreemptionConfiguration
	if pc == nil || pc.PreemptionRetriesBeforeTermination == nil {
		return -1
	}
	return *pc.PreemptionRetriesBeforeTermination
}

// CurrentAttempt is the record of the job's latest attempt, nil before
// the first.
func (j *Job) CurrentAttempt() *Attempt {
	if len(j.Attempts) == 0 {
		return nil
	}
	return &j.Attempts[len(j.Attempts)-1]
}
