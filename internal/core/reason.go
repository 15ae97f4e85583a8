package core

import (
	"fmt"
	"time"
)

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
	ReasonAtLimit       // share at its limit of Limit Unit, Lendable (too little) lendable
	ReasonAtBorrowLimit // share at its limit and at its borrow limit BorrowCap
	ReasonCapacity      // Unit in use by other shares within their limits or reserved
	ReasonHeldBack      // preempted at this instant; eligible again at the next change
	ReasonEnvDisabled
	ReasonQueueDisabled
	// Preemption.
	ReasonPreemptedCrossShare // capacity reclaimed by Share for Job
	ReasonPreemptedInShare    // for higher-priority Job
	// Failure.
	ReasonRetriesExhausted
	ReasonShareDeleted
	ReasonQueueDeleted
	// Waiting: the job could preempt Job of Share but for its minimum
	// runtime MinRuntime, which it reaches at Until.
	ReasonMinRuntime
)

// Waiting in a fair-share queue, numbered apart from the quota-share codes.
const (
	ReasonFairCapacity ReasonCode = 64 + iota // Need of Unit in use; FairTenths: the identifier's load against its weighted share
	ReasonFairReserved                        // IdleCount of Unit kept back by computeReservation (Limit percent, Active identifiers)
)

// Reason is why something happened, as data. String renders the text the
// API shows in statusReason.
type Reason struct {
	Code  ReasonCode
	Job   string // the blocking head, or the preemptor
	Env   string // the service environment that lacks Need of Unit (ReasonEnvMaxResource)
	Share string
	Unit  string
	Limit int
	Need  int
	// Lendable is what other shares can lend the share of Unit now
	// (ReasonAtLimit); BorrowCap the most of Unit it may borrow
	// (ReasonAtBorrowLimit).
	Lendable  int
	BorrowCap int
	// FairTenths is, in tenths, how many times its weighted share of the
	// active identifiers' load share identifier Share carries over the
	// last Window seconds; -1 when no identifier carries any
	// (ReasonFairCapacity). Active counts the active identifiers
	// (ReasonFairReserved).
	FairTenths int
	Window     int
	Active     int
	// Idle is free idle capacity of Unit that the job cannot use: kept by
	// RESERVE shares (ReasonCapacity, ReasonAtLimit), or lendable but not
	// to this share (ReasonShareFull: it does not borrow;
	// ReasonAtBorrowLimit). It is IdleCount instances of IdleFrom (a share,
	// or "" for the capacity beyond all share limits) and, when IdleSources
	// is above 1, of others.
	IdleCount   int
	IdleFrom    string
	IdleSources int
	// MinRuntime is Share's minimum runtime before preemption, and Until
	// (Unix ns) when Job reaches it (ReasonMinRuntime).
	MinRuntime time.Duration
	Until      int64
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
		// Clients match the code before " - "; the words after it are ours.
		const code = "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - "
		switch {
		case r.Unit == "":
			return code + "Service environment(s) associated with the job queue cannot meet the capacity requirement of the job."
		case r.Limit == 0:
			return code + fmt.Sprintf("instance type %s is not in the capacity limits of service environment %s", r.Unit, r.Env)
		}
		return code + fmt.Sprintf("the job needs %d %s; service environment %s has at most %d", r.Need, r.Unit, r.Env, r.Limit)
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
		t := fmt.Sprintf("%s at its limit of %d %s", r.Share, r.Limit, r.Unit)
		if r.IdleCount > 0 {
			t += "; only LEND_AND_BORROW shares may borrow " + r.idle()
		}
		return t
	case ReasonAtLimit:
		t := fmt.Sprintf("%s at its limit of %d %s and nothing lendable", r.Share, r.Limit, r.Unit)
		if r.Lendable > 0 {
			t = fmt.Sprintf("%s at its limit of %d %s and only %d lendable", r.Share, r.Limit, r.Unit, r.Lendable)
		}
		if r.IdleCount > 0 {
			t += ": " + r.reserved()
		}
		return t
	case ReasonAtBorrowLimit:
		t := fmt.Sprintf("%s at its limit of %d %s and at its borrow limit of %d", r.Share, r.Limit, r.Unit, r.BorrowCap)
		if r.IdleCount > 0 {
			t += ", so it may not borrow " + r.idle()
		}
		return t
	case ReasonCapacity:
		switch {
		case r.Unit == "":
			return "waiting for capacity"
		case r.Share == "":
			// A FIFO queue: no shares, no limits.
			return fmt.Sprintf("waiting for %d %s: capacity in use", r.Need, r.Unit)
		case r.IdleCount >= r.Need:
			return fmt.Sprintf("waiting for %d %s: %s", r.Need, r.Unit, r.reserved())
		case r.IdleCount > 0:
			return fmt.Sprintf("waiting for %d %s: capacity in use within quota share limits, and %s", r.Need, r.Unit, r.reserved())
		}
		return fmt.Sprintf("waiting for %d %s: capacity in use within quota share limits", r.Need, r.Unit)
	case ReasonFairCapacity:
		t := "waiting for capacity"
		if r.Unit != "" {
			t = fmt.Sprintf("waiting for %d %s: capacity in use", r.Need, r.Unit)
		}
		if r.FairTenths >= 0 {
			t += fmt.Sprintf("; share identifier %s has used %d.%dx its weighted share in the last %s", r.Share, r.FairTenths/10, r.FairTenths%10, window(r.Window))
		}
		return t
	case ReasonFairReserved:
		verb := "is"
		if r.IdleCount != 1 {
			verb = "are"
		}
		return fmt.Sprintf("waiting for %d %s: %d %s %s kept back for share identifiers not yet active (computeReservation %d%%, %d active)",
			r.Need, r.Unit, r.IdleCount, plural(r.IdleCount, "instance"), verb, r.Limit, r.Active)
	case ReasonHeldBack:
		return "preempted in this scheduling cycle; eligible again at the next change"
	case ReasonEnvDisabled:
		return "service environment is DISABLED"
	case ReasonQueueDisabled:
		return "job queue is DISABLED"
	case ReasonPreemptedCrossShare:
		if r.Job == "" {
			return fmt.Sprintf("Preempted: cross-share preemption (capacity reclaimed by quota share %s)", r.Share)
		}
		return fmt.Sprintf("Preempted: cross-share preemption (capacity reclaimed by quota share %s for job %s)", r.Share, r.Job)
	case ReasonPreemptedInShare:
		return fmt.Sprintf("Preempted: in-share preemption (higher priority job %s)", r.Job)
	case ReasonRetriesExhausted:
		return "Preemption retries exhausted"
	case ReasonShareDeleted:
		return "Quota share deleted"
	case ReasonQueueDeleted:
		return "Job queue deleted"
	case ReasonMinRuntime:
		return fmt.Sprintf("waiting for job %s of share %s to reach its minimum runtime of %s at %s",
			r.Job, r.Share, seconds(r.MinRuntime), time.Unix(0, r.Until).UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("Reason(%d)", uint8(r.Code))
}

// idle names the idle capacity of the reason: "QS3's idle instance", "QS3's
// 2 idle instances", "3 idle instances of QS3 and others", "the idle
// instance beyond the quota share limits".
func (r Reason) idle() string {
	noun := "idle instance"
	if r.IdleCount > 1 {
		noun = fmt.Sprintf("%d idle instances", r.IdleCount)
	}
	switch {
	case r.IdleSources > 1:
		return fmt.Sprintf("%d %s of %s and others", r.IdleCount, plural(r.IdleCount, "idle instance"), orBeyond(r.IdleFrom))
	case r.IdleFrom == "":
		return "the " + noun + " beyond the quota share limits"
	}
	return r.IdleFrom + "'s " + noun
}

// reserved says that the reason's idle capacity is kept by RESERVE shares.
func (r Reason) reserved() string {
	verb := " is RESERVE"
	if r.IdleCount > 1 {
		verb = " are RESERVE"
	}
	return r.idle() + verb
}

// window renders a decay window: "hour", "10 minutes", "90 s".
func window(sec int) string {
	switch {
	case sec == 3600:
		return "hour"
	case sec%3600 == 0:
		return fmt.Sprintf("%d hours", sec/3600)
	case sec%60 == 0:
		return fmt.Sprintf("%d minutes", sec/60)
	}
	return fmt.Sprintf("%d s", sec)
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func orBeyond(share string) string {
	if share == "" {
		return "the capacity beyond the quota share limits"
	}
	return share
}

// seconds renders a duration as whole seconds, "300s", as the cluster file
// gives it; a fraction is kept ("1.5s").
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%gs", d.Seconds())
}
