package core

import (
	"fmt"
	"strings"
	"time"
)

// UnitCount is an amount of one capacity unit: count instances of an
// instance type such as ml.g5.xlarge.
type UnitCount struct {
	Unit  string
	Count int
}

func (u UnitCount) String() string { return fmt.Sprintf("%s:%d", u.Unit, u.Count) }

// formatUnits renders units as "a:1,b:2" in the order given.
func formatUnits(us []UnitCount) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// Strategy is a quota share's resource sharing strategy.
type Strategy uint8

const (
	Reserve Strategy = iota + 1
	Lend
	LendAndBorrow
)

// ParseStrategy reads AWS's spelling of a strategy.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "RESERVE":
		return Reserve, nil
	case "LEND":
		return Lend, nil
	case "LEND_AND_BORROW":
		return LendAndBorrow, nil
	}
	return 0, fmt.Errorf("unknown resource sharing strategy %q", s)
}

func (s Strategy) String() string {
	switch s {
	case Reserve:
		return "RESERVE"
	case Lend:
		return "LEND"
	case LendAndBorrow:
		return "LEND_AND_BORROW"
	}
	return fmt.Sprintf("Strategy(%d)", uint8(s))
}

// UnlimitedBorrow is the borrowLimit that lets a LEND_AND_BORROW share
// borrow without a cap (AWS's default, -1).
const UnlimitedBorrow = -1

// Event is a change the core applies: one of the types below.
type Event interface{ isEvent() }

// PutEnv creates or updates a service environment: the pool of capacity
// that its job queues draw from.
type PutEnv struct {
	Name     string
	Limits   []UnitCount // maxCapacity per instance type
	Disabled bool
}

// DeleteEnv removes a service environment. No queue may still use it.
type DeleteEnv struct{ Name string }

// PutQueue creates or updates a job queue attached to a service
// environment. A queue with QuotaShares schedules by quota share (it must
// be the environment's only queue); one without is FIFO.
type PutQueue struct {
	Name        string
	Env         string
	QuotaShares bool
	Priority    int // orders FIFO queues that share an environment
	Disabled    bool
	// Fair is the fair-share policy of a queue without quota shares; such
	// a queue must be its environment's only one.
	Fair *FairShare
}

// DeleteQueue removes a DISABLED job queue; its jobs fail.
type DeleteQueue struct{ Name string }

// PutShare creates or updates a quota share of a quota-share queue.
type PutShare struct {
	Queue             string
	Name              string
	Limits            []UnitCount
	Strategy          Strategy
	BorrowLimit       int // percent; UnlimitedBorrow for no cap. Only LEND_AND_BORROW.
	InSharePreemption bool
	Disabled          bool
	// MinRuntime is sharq's own setting (AWS has none): a dispatched job of
	// the share younger than this is no victim of in-share or cross-share
	// preemption. 0, the default, protects nothing.
	MinRuntime time.Duration
}

// DeleteShare removes a DISABLED quota share; its jobs fail.
type DeleteShare struct{ Queue, Name string }

// Submit adds a RUNNABLE job. QueuedAt (nanoseconds) orders jobs of equal
// priority and is kept across preemptions and retries.
type Submit struct {
	Job      string
	Queue    string
	Share    string // the quota share or share identifier; empty for FIFO queues
	Demand   []UnitCount
	Priority int
	QueuedAt int64
	// PreemptionRetries is preemptionRetriesBeforeTermination; -1 when unset
	// (requeue without limit).
	PreemptionRetries int
	// Preempted is how many times the job was already preempted (when
	// rebuilding from the store).
	Preempted int
}

// Restore puts back a dispatched job when the engine rebuilds the core from
// its store; it is not checked against capacity.
type Restore struct {
	Submit
	DispatchedAt int64
}

// SetPriority changes a job's schedulingPriority in any live state.
type SetPriority struct {
	Job      string
	Priority int
}

// Terminate removes a job in any live state; its capacity is free at once.
type Terminate struct{ Job string }

// AttemptEnded reports that a dispatched job's attempt ended. With Requeue
// the job returns to RUNNABLE at its old place; otherwise it leaves the core
// (succeeded or failed for good). A caller that kept the job's Handle passes
// it, and the job is then found without its ID.
type AttemptEnded struct {
	Job     string
	Handle  Handle
	Requeue bool
}

func (PutEnv) isEvent()       {}
func (DeleteEnv) isEvent()    {}
func (PutQueue) isEvent()     {}
func (DeleteQueue) isEvent()  {}
func (PutShare) isEvent()     {}
func (DeleteShare) isEvent()  {}
func (Submit) isEvent()       {}
func (Restore) isEvent()      {}
func (SetPriority) isEvent()  {}
func (Terminate) isEvent()    {}
func (AttemptEnded) isEvent() {}

// Kind is what a decision does.
type Kind uint8

const (
	// Dispatch: the job is SCHEDULED on the capacity in Own and Borrowed.
	Dispatch Kind = iota + 1
	// Preempt: the job is stopped to make room for job For. If Requeued it
	// returns to RUNNABLE, otherwise it FAILED (retries exhausted).
	Preempt
	// Fail: the job FAILED for Reason and left the core.
	Fail
	// Wait: the job stays RUNNABLE for Reason (reported for the heads a
	// cycle looked at).
	Wait
)

// PreemptionKind tells why a job was preempted.
type PreemptionKind uint8

const (
	CrossShare PreemptionKind = iota + 1
	InShare
)

func (k PreemptionKind) String() string {
	if k == InShare {
		return "in-share"
	}
	return "cross-share"
}

// Via tells how a dispatch found its capacity.
type Via uint8

const (
	ViaIdle    Via = iota + 1 // capacity that was free
	ViaReclaim                // capacity reclaimed from borrowers (cross-share preemption)
	ViaInShare                // capacity taken from lower-priority jobs of the share
)

func (v Via) String() string {
	switch v {
	case ViaReclaim:
		return "reclaim"
	case ViaInShare:
		return "in-share"
	}
	return "idle"
}

// Decision is one outcome of a cycle. Fields beyond Kind, Job, Queue and
// Share are set according to Kind.
type Decision struct {
	Kind   Kind
	Job    string
	Handle Handle // Dispatch: the job's, valid while the job is live
	Queue  string
	Share  string

	// Dispatch.
	Own      []UnitCount // within the share's own limit
	Borrowed []UnitCount // borrowed from other shares' idle capacity
	Via      Via

	// Preempt.
	For        string // the job the capacity went to
	ForShare   string
	Preemption PreemptionKind
	Requeued   bool

	// Preempt, Fail and Wait.
	Reason Reason
}

// String renders a decision in the stable form the scenario tests compare.
func (d Decision) String() string {
	var b strings.Builder
	switch d.Kind {
	case Dispatch:
		fmt.Fprintf(&b, "dispatch %s share=%s", d.Job, d.Share)
		if len(d.Own) > 0 {
			fmt.Fprintf(&b, " own=%s", formatUnits(d.Own))
		}
		if len(d.Borrowed) > 0 {
			fmt.Fprintf(&b, " borrowed=%s", formatUnits(d.Borrowed))
		}
		fmt.Fprintf(&b, " via=%s", d.Via)
	case Preempt:
		fmt.Fprintf(&b, "preempt %s share=%s for=%s kind=%s", d.Job, d.Share, d.For, d.Preemption)
		if d.Requeued {
			b.WriteString(" requeued")
		} else {
			b.WriteString(" failed")
		}
	case Fail:
		fmt.Fprintf(&b, "fail %s: %s", d.Job, d.Reason)
	case Wait:
		fmt.Fprintf(&b, "wait %s: %s", d.Job, d.Reason)
	}
	return b.String()
}

// Decisions is what one Step decided, in the order it was decided.
type Decisions struct {
	List []Decision
}

func (ds Decisions) String() string {
	var b strings.Builder
	for _, d := range ds.List {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}
