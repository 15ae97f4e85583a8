package sharqapi

import (
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
)

// The wire shapes of the sharq-specific routes. They are lowerCamelCase JSON
// like the AWS Batch API's, and the CLI decodes them with these same types.

// Usage is GET /sharq/v1/shares: every queue's environment and shares.
type Usage struct {
	Queues []QueueUsage `json:"queues"`
	// JobCounts counts the jobs the server holds, by status.
	JobCounts map[string]int `json:"jobCounts"`
}

// QueueUsage is a job queue with its service environment's capacity and its
// shares' standing. A FIFO queue has one share with an empty name.
type QueueUsage struct {
	Name               string      `json:"name"`
	State              string      `json:"state"`
	ServiceEnvironment string      `json:"serviceEnvironment,omitempty"`
	Capacity           []UnitUsage `json:"capacity"` // the environment's limit and use per unit
	Shares             []Share     `json:"shares"`
}

// Share is a quota share's standing.
type Share struct {
	Name              string `json:"name"`
	State             string `json:"state"`
	Strategy          string `json:"strategy,omitempty"`
	BorrowLimit       int    `json:"borrowLimit"` // -1: unlimited
	InSharePreemption bool   `json:"inSharePreemption"`
	// MinimumRuntimeSeconds is sharq's minimum runtime before preemption
	// (ShareSettings); 0: none.
	MinimumRuntimeSeconds int         `json:"minimumRuntimeSeconds,omitempty"`
	Runnable              int         `json:"runnable"` // RUNNABLE jobs, those that cannot run as configured included
	Units                 []UnitUsage `json:"units"`
}

// UnitUsage is a share's (or an environment's) standing on one capacity
// unit, in instances. Used = Own + Borrowed and Limit >= Own + Lent + Idle.
type UnitUsage struct {
	Unit     string `json:"unit"`
	Limit    int    `json:"limit"`
	Used     int    `json:"used"`
	Own      int    `json:"own"`
	Borrowed int    `json:"borrowed"`
	Lent     int    `json:"lent"`
	Idle     int    `json:"idle"`
	// BorrowedFrom splits Borrowed by whose capacity it stands on, LentTo
	// splits Lent by borrower (docs/decisions.md, "Whose capacity a job
	// runs on").
	BorrowedFrom []ShareCount `json:"borrowedFrom,omitempty"`
	LentTo       []ShareCount `json:"lentTo,omitempty"`
}

// ShareCount is some instances of a unit lent to or borrowed from a share.
type ShareCount struct {
	// Share is the other share; empty for the service environment's
	// capacity beyond all share limits.
	Share string `json:"share"`
	Count int    `json:"count"`
	// Reclaimable (borrowed capacity only): the lender has a waiting job
	// that will take it back, as Loan's says.
	Reclaimable bool `json:"reclaimable,omitempty"`
}

// Holding is whose capacity a running (SCHEDULED, STARTING or RUNNING) job
// of a quota share holds.
type Holding struct {
	Own      []Instances `json:"own"`      // within its share's limit
	Borrowed []Loan      `json:"borrowed"` // beyond it
}

// Instances is a count of one capacity unit.
type Instances struct {
	Unit  string `json:"unit"`
	Count int    `json:"count"`
}

// Placement is where one instance of an attempt runs, as an executor that
// knows it tells (the kube executor's pods and nodes).
type Placement struct {
	Host  string `json:"host"`            // algo-N
	Name  string `json:"name,omitempty"`  // the pod ("" while there is none)
	Node  string `json:"node,omitempty"`  // "" until it is placed
	Phase string `json:"phase,omitempty"` // Pending, Running, Succeeded or Failed
}

// JobPlacements is the part of the console's job detail (GET
// /sharq/v1/console/jobs/{job}) that `sharq describe` reads.
type JobPlacements struct {
	// Instances, by attempt as in the job's attempts, tells where each
	// instance runs (its pod and node) while the executor knows it; absent
	// when the executor tells no such thing.
	Instances [][]Placement `json:"instances,omitempty"`
}

// Loan is borrowed capacity of one unit and whose it is.
type Loan struct {
	Unit  string `json:"unit"`
	Count int    `json:"count"`
	// Lender is the share whose idle capacity the instances are; empty for
	// the service environment's capacity beyond all share limits, which
	// nobody reclaims.
	Lender string `json:"lender"`
	// Reclaimable tells that the lender has a waiting job that needs the
	// unit and fits its own limits: it takes the capacity back (cross-share
	// preemption) once its own jobs leave room for that job.
	Reclaimable bool `json:"reclaimable"`
}

// PositionsRequest is the body of POST /sharq/v1/jobs/positions.
type PositionsRequest struct {
	JobIDs []string `json:"jobIds"` // IDs or ARNs, at most MaxPositions
}

// Matches answers GET /sharq/v1/jobs/match: the IDs of the jobs whose ID
// begins or ends with the part asked for, at most MaxMatches of them.
type Matches struct {
	JobIDs []string `json:"jobIds"`
}

// MaxMatches caps a match's answer: enough to show an ambiguous part's
// jobs to a person.
const MaxMatches = 10

// MaxPositions caps the jobs of one positions request.
const MaxPositions = 1000

// Positions answers POST /sharq/v1/jobs/positions.
type Positions struct {
	Jobs []Position `json:"jobs"`
	// Unknown lists the requested jobs the server does not hold.
	Unknown []string `json:"unknown"`
}

// Position is where a job stands: its priority and, while it waits, its
// place in its share's RUNNABLE order and why it waits.
type Position struct {
	JobID    string `json:"jobId"`
	Queue    string `json:"queue"`
	Share    string `json:"share,omitempty"`
	Status   string `json:"status"`
	Priority int    `json:"priority"`
	// Place is the 1-based place in the share's RUNNABLE order (jobs that
	// cannot run as configured come last); 0 when the job is not waiting.
	Place int `json:"place,omitempty"`
	// Reason is why a waiting job waits, as DescribeServiceJob's
	// statusReason says it.
	Reason string `json:"reason,omitempty"`
	// Misconfigured tells that the job can never run with the current
	// configuration (a MISCONFIGURATION reason); it does not block its share.
	Misconfigured bool `json:"misconfigured,omitempty"`
	Preemptions   int  `json:"preemptions"`
	// Holding is whose capacity a running job of a quota share holds.
	Holding *Holding `json:"holding,omitempty"`
	// Owner is the principal that submitted the job (empty when the
	// server checks no signatures).
	Owner string `json:"owner,omitempty"`
	// ETA is when a waiting job is expected to start; nil for a job that
	// does not wait, or that came since the estimates were last made.
	ETA *StartEstimate `json:"eta,omitempty"`
}

// StartEstimate is when a waiting job is expected to start: the scheduler
// run forward from the server's state, each running job ending when its
// max runtime, its time limit or its share's recent run times say.
type StartEstimate struct {
	// Kind is ESTIMATED (it starts at At), NOT_WITHIN (it had not started
	// at At, as far as the estimate looked), NO_BASIS (capacity it needs
	// is held by jobs whose end nothing tells) or NEVER (it cannot start as
	// configured).
	Kind string `json:"kind"`
	At   int64  `json:"at,omitempty"` // epoch ms
	// Basis is what the ends before its start rest on: MAX_RUNTIME,
	// TIME_LIMIT, HISTORY; empty when it starts at once.
	Basis []string `json:"basis,omitempty"`
	// EstimatedAt is when the estimate was made (epoch ms).
	EstimatedAt int64 `json:"estimatedAt"`
}

// EstimatesPath is the route of every waiting job's estimated start.
const EstimatesPath = "/sharq/v1/estimates"

// Estimates answers GET /sharq/v1/estimates: the latest estimates of every
// waiting job (as of EstimatedAt: some may have started since). With
// ?since=MS and no estimates made after MS, Jobs is empty and Unchanged
// true.
type Estimates struct {
	EstimatedAt int64 `json:"estimatedAt"` // 0 before the first estimates
	// Until is where the forward run stopped (epoch ms), and Stop why:
	// ALL_STARTED (every waiting job had a start), HORIZON, WORK_BOUND (the
	// bound on its work) or NO_KNOWN_END.
	Until     int64         `json:"until,omitempty"`
	Stop      string        `json:"stop,omitempty"`
	Unchanged bool          `json:"unchanged,omitempty"`
	Jobs      []JobEstimate `json:"jobs"` // by job ID
}

// JobEstimate is one job's estimated start.
type JobEstimate struct {
	JobID string `json:"jobId"`
	StartEstimate
}

// JobEvents answers GET /sharq/v1/jobs/{job}/events: the job's state
// changes, oldest first.
type JobEvents struct {
	Events []batchapi.Event `json:"events"`
}

// Error is the body of every non-2xx answer.
type Error = jsonhttp.Error

// Headers of GET /sharq/v1/jobs/{job}/logs. The body is the raw bytes of
// the log from the requested offset.
const (
	// HeaderAttempt is the 1-based attempt the bytes come from (0: the job
	// has not started an attempt yet).
	HeaderAttempt = "Sharq-Attempt"
	// HeaderAttempts is how many attempts the job has had.
	HeaderAttempts = "Sharq-Attempts"
	// HeaderNextOffset is the offset to ask for next.
	HeaderNextOffset = "Sharq-Next-Offset"
	// HeaderJobStatus is the job's status when the bytes were read; a
	// follower stops once it is SUCCEEDED or FAILED and no bytes are left.
	HeaderJobStatus = "Sharq-Job-Status"
)

// MaxLogChunk caps the bytes of one logs answer.
const MaxLogChunk = 1 << 20
