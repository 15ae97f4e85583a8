package sharqapi

import (
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"github.com/sharq-dev/sharq/internal/readmodel"
)

// The wire shapes of the sharq-specific routes. They are lowerCamelCase JSON
// like the AWS Batch API's, and the CLI decodes them with these same types.

// The views of the scheduler's state are the read model's, from which the
// console renders too.
type (
	Usage         = readmodel.Usage // GET /sharq/v1/shares: every queue's environment and shares
	QueueUsage    = readmodel.QueueUsage
	Share         = readmodel.Share
	UnitUsage     = readmodel.UnitUsage
	ShareCount    = readmodel.ShareCount
	Holding       = readmodel.Holding
	Instances     = readmodel.Instances
	Loan          = readmodel.Loan
	Position      = readmodel.Position
	Estimate      = readmodel.Estimate
	StartEstimate = readmodel.StartEstimate
	// Estimates answers GET /sharq/v1/estimates. With ?since=MS and no
	// estimates made after MS, Jobs is empty and Unchanged true.
	Estimates   = readmodel.Estimates
	JobEstimate = readmodel.JobEstimate
)

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

// EstimatesPath is the route of every waiting job's estimated start.
const EstimatesPath = "/sharq/v1/estimates"

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
