package readmodel

// Usage is every queue's environment and shares.
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

// Environment is a service environment's capacity per unit.
type Environment struct {
	Name  string      `json:"name"`
	Units []UnitUsage `json:"units"`
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

// Estimate is when a waiting job is expected to start: the scheduler run
// forward from the server's state, each running job ending when its max
// runtime, its time limit or its share's recent run times say. It holds
// no clock reading, so that the console's state does not change while the
// estimates do not.
type Estimate struct {
	// Kind is ESTIMATED (it starts at At), NOT_WITHIN (it had not started
	// at At, as far as the estimate looked), NO_BASIS (capacity it needs
	// is held by jobs whose end nothing tells) or NEVER (it cannot start as
	// configured).
	Kind string `json:"kind"`
	At   int64  `json:"at,omitempty"` // epoch ms
	// Basis is what the ends before its start rest on: MAX_RUNTIME,
	// TIME_LIMIT, HISTORY; empty when it starts at once.
	Basis []string `json:"basis,omitempty"`
}

// StartEstimate is an estimate with when it was made.
type StartEstimate struct {
	Estimate
	// EstimatedAt is when the estimate was made (epoch ms).
	EstimatedAt int64 `json:"estimatedAt"`
}

// Estimates is the latest estimates of every waiting job (as of
// EstimatedAt: some may have started since).
type Estimates struct {
	EstimatedAt int64 `json:"estimatedAt"` // 0 before the first estimates
	// Until is where the forward run stopped (epoch ms), and Stop why:
	// ALL_STARTED (every waiting job had a start), HORIZON, WORK_BOUND (the
	// bound on its work) or NO_KNOWN_END.
	Until int64  `json:"until,omitempty"`
	Stop  string `json:"stop,omitempty"`
	// Unchanged tells that no estimates were made after the time asked
	// about; Jobs is then empty.
	Unchanged bool          `json:"unchanged,omitempty"`
	Jobs      []JobEstimate `json:"jobs"` // by job ID
}

// JobEstimate is one job's estimated start.
type JobEstimate struct {
	JobID string `json:"jobId"`
	StartEstimate
}
