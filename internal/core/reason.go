package core

import "fmt"

// ReasonCode classifies why a job waits, was preempted or failed.
type ReasonCode uint8

const (
	ReasonNone ReasonCode = iota
	// Infeasible with the current configuration (spec 1.1); the job does not
	// block its share.
	ReasonEnvMaxResource
	ReasonShareLimit
	ReasonShareBorrowLimit
	ReasonBorrowable
	// Waiting.
	ReasonBlocked       // behind the head Job of its share
	ReasonShareFull     // share (not borrowing) at its limit of Limit Unit
	ReasonAtLimit       // share at its limit of Limit Unit, nothing lendable
	ReasonAtBorrowLimit // share at its limit and at its borrow limit
	ReasonCapacity      // Unit in use by other shares within their limits or reserved
	ReasonHeldBack      // preempted at this instant; eligible again at the next change
	ReasonEnvDisabled
	ReasonQueueDisabled
	// Preemption.
	ReasonPreemptedCrossShare // capacity reclaimed by Share
	ReasonPreemptedInShare    // for higher-priority Job
	// Failure.
	ReasonRetriesExhausted
	ReasonShareDeleted
	ReasonQueueDeleted
)

// Reason is why something happened, as data. String renders the text the
// API shows in statusReason.
type Reason struct {
	Code  ReasonCode
	Job   string // the blocking head, or the preemptor
	Share string
	Unit  string
	Limit int
	Need  int
}

// Misconfiguration tells whether the job can never be placed with the
// current configuration.
func (r Reason) Misconfiguration() bool {
	return r.Code >= ReasonEnvMaxResource && r.Code <= ReasonBorrowable
}

func (r Reason) String() string {
	switch r.Code {
	case ReasonNone:
		return ""
	case ReasonEnvMaxResource:
		return "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated with the job queue cannot meet the capacity requirement of the job."
	case ReasonShareLimit:
		return "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share capacity limits."
	case ReasonShareBorrowLimit:
		return "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share capacity limits and borrow limits."
	case ReasonBorrowable:
		return "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requires borrowing that exceeds all configured borrowable capacity."
	case ReasonBlocked:
		if r.Share == "" {
			return fmt.Sprintf("blocked behind job %s", r.Job)
		}
		return fmt.Sprintf("blocked behind job %s in share %s", r.Job, r.Share)
	case ReasonShareFull:
		return fmt.Sprintf("%s at its limit of %d %s", r.Share, r.Limit, r.Unit)
	case ReasonAtLimit:
		return fmt.Sprintf("%s at its limit of %d %s and nothing lendable", r.Share, r.Limit, r.Unit)
	case ReasonAtBorrowLimit:
		return fmt.Sprintf("%s at its limit of %d %s and at its borrow limit", r.Share, r.Limit, r.Unit)
	case ReasonCapacity:
		switch {
		case r.Unit == "":
			return "waiting for capacity"
		case r.Share == "":
			// A FIFO queue: no shares, no limits.
			return fmt.Sprintf("waiting for %d %s: capacity in use", r.Need, r.Unit)
		}
		return fmt.Sprintf("waiting for %d %s: capacity in use within quota share limits or kept by RESERVE shares", r.Need, r.Unit)
	case ReasonHeldBack:
		return "preempted in this scheduling cycle; eligible again at the next change"
	case ReasonEnvDisabled:
		return "service environment is DISABLED"
	case ReasonQueueDisabled:
		return "job queue is DISABLED"
	case ReasonPreemptedCrossShare:
		return fmt.Sprintf("Preempted: cross-share preemption (capacity reclaimed by quota share %s)", r.Share)
	case ReasonPreemptedInShare:
		return fmt.Sprintf("Preempted: in-share preemption (higher priority job %s)", r.Job)
	case ReasonRetriesExhausted:
		return "Preemption retries exhausted"
	case ReasonShareDeleted:
		return "Quota share deleted"
	case ReasonQueueDeleted:
		return "Job queue deleted"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r.Code))
}
