// Package executor defines how the engine runs job attempts: the Executor
// interface that the local (processes), kube (Kubernetes) and simulated
// backends implement. It sits on the shell side of the core/shell boundary.
package executor

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Attempt is one try of a service job on the capacity the scheduler gave it.
type Attempt struct {
	// ID names the attempt uniquely (it becomes the training job name);
	// Start and Stop are idempotent by ID.
	ID      string
	JobID   string
	JobName string
	// TrainingJobArn is the ARN of the SageMaker training job the attempt
	// runs as (its name is ID).
	TrainingJobArn string
	// Queue and Share are the job's queue and quota share, which an
	// executor may place attempts by (the kube executor's namespaces).
	Queue, Share string
	// Payload is the SageMaker CreateTrainingJob request (PascalCase JSON).
	Payload []byte
	// Request is Payload parsed, once for the attempt by the engine; nil
	// when it does not parse (or the caller did not parse it), and then
	// ReadRequest parses Payload. It is shared and read-only: an executor
	// copies what it would change.
	Request *trainingjob.Request
	// Instances is the capacity dispatched to the attempt, per instance type.
	// The engine starts an attempt only once the attempts preempted for it
	// have reported that they stopped: its capacity is theirs.
	Instances []Instances
	// Timeout stops the attempt after this long running (0: none); it then
	// fails with "Attempt duration exceeded".
	Timeout time.Duration
	// Grace is the job's grace period: how long its processes get between
	// SIGTERM (or the backend's equivalent) and a hard kill when it is
	// stopped. Stop is passed the same.
	Grace time.Duration
	// Term is the leadership term of the server that decided the attempt,
	// when several servers share one store (0 otherwise). A backend whose
	// state outlives servers can refuse the calls of an older term than it
	// has seen.
	Term int64
}

// ReadRequest is the attempt's CreateTrainingJob request: Request, else
// Payload parsed now, with trainingjob.Parse's error when it does not
// parse.
func (a *Attempt) ReadRequest() (*trainingjob.Request, error) {
	if a.Request != nil {
		return a.Request, nil
	}
	return trainingjob.Parse(a.Payload)
}

// Instances is a count of one instance type.
type Instances struct {
	Type  string
	Count int
}

// State is where an attempt is.
type State string

const (
	Starting  State = "STARTING"  // resources acquired, data staged, processes starting
	Running   State = "RUNNING"   // the job's processes run
	Succeeded State = "SUCCEEDED" // all processes exited 0
	Failed    State = "FAILED"    // a process failed, or the attempt could not start
	Stopped   State = "STOPPED"   // stopped on request (Stop), or timed out
	Lost      State = "LOST"      // the executor lost the attempt (e.g. machine reboot)
)

// Terminal tells whether the attempt has ended.
func (s State) Terminal() bool {
	return s == Succeeded || s == Failed || s == Stopped || s == Lost
}

// Update reports an attempt's change of state.
type Update struct {
	AttemptID string
	JobID     string
	State     State
	// Reason explains a terminal state, e.g. "exit code 2: <last stderr
	// lines>" or "Attempt duration exceeded".
	Reason   string
	ExitCode int
	At       time.Time
}

// Executor runs attempts. Implementations are safe for concurrent use.
type Executor interface {
	// Start begins an attempt. It returns quickly; progress arrives on
	// Updates. Starting an attempt that exists is a no-op.
	Start(ctx context.Context, a Attempt) error
	// Stop asks the attempt to end: SIGTERM (or the backend's equivalent),
	// then a hard kill after grace. Stopping an unknown or ended attempt is
	// a no-op.
	Stop(ctx context.Context, attemptID string, grace time.Duration) error
	// Updates delivers state changes in the order they happened per attempt.
	Updates() <-chan Update
	// Attempts lists what the executor knows after a restart: live attempts
	// with their current state and those that ended while nobody listened.
	Attempts(ctx context.Context) ([]Update, error)
	// Close releases the executor's resources. Running attempts of a local
	// executor keep running (they are supervised by their own processes).
	Close() error
}

// ErrPermanent marks an error of Start that trying again cannot cure: the
// attempt cannot run as asked, and the engine fails it at once. Other
// errors (a connection refused, a timeout) are taken as transient and the
// call is tried again.
var ErrPermanent = errors.New("permanent executor error")

// Permanent marks err as permanent; its message is unchanged.
func Permanent(err error) error { return permanentError{err} }

type permanentError struct{ err error }

func (p permanentError) Error() string        { return p.err.Error() }
func (p permanentError) Unwrap() error        { return p.err }
func (p permanentError) Is(target error) bool { return target == ErrPermanent }

// LogReader is an executor that keeps what its attempts' instances print.
// Logs opens the stdout or stderr (stream) of one instance (host, algo-1
// to algo-N) of an attempt, from offset on: an empty reader while nothing
// is written yet, ErrNoLogs when the attempt's logs are not (or no more)
// kept.
type LogReader interface {
	Logs(ctx context.Context, attemptID, host, stream string, offset int64) (io.ReadCloser, error)
}

// SubmitChecker is implemented by an executor that can tell at submission
// that a payload cannot run on it, such as the local executor when the
// command does not exist. The engine asks it before accepting a job, so
// the submitter is told at once rather than by a job failing later.
type SubmitChecker interface {
	// CheckSubmit returns why the request, a payload the engine accepts,
	// cannot run, or nil when it may run or the executor cannot tell yet
	// (the attempt then fails as before). The request is read-only.
	CheckSubmit(r *trainingjob.Request) error
}

// ErrNoLogs is LogReader's answer for an attempt whose logs it does not
// keep.
var ErrNoLogs = errors.New("no logs kept for the attempt")

// InstanceLister is implemented by an executor that can tell where an
// attempt's instances run, such as the kube executor: each instance's pod
// and the node it is on. The console shows them.
type InstanceLister interface {
	// Instances lists the attempt's instances, algo-1 first; nil when the
	// executor does not know the attempt (or no more).
	Instances(attemptID string) []Instance
}

// Instance is where one instance of an attempt runs.
type Instance struct {
	Host  string `json:"host"`            // algo-N
	Name  string `json:"name,omitempty"`  // the pod ("" while there is none)
	Node  string `json:"node,omitempty"`  // "" until it is placed
	Phase string `json:"phase,omitempty"` // Pending, Running, Succeeded or Failed
}
