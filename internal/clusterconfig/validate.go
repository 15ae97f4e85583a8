package clusterconfig

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/sharq-dev/sharq/internal/batchmodel"
)

// Errors a FieldError wraps.
var (
	ErrRequired  = errors.New("is required")
	ErrDuplicate = errors.New("is already used")
	ErrUnknown   = errors.New("names nothing in this file")
	ErrEnum      = errors.New("has a value that is not allowed")
	ErrRange     = errors.New("is out of range")
)

// FieldError names the field that is wrong, e.g.
// "jobQueues[0].quotaShares[2].capacityLimits[0].maxCapacity".
type FieldError struct {
	Field string
	Err   error
	// Detail says more, e.g. the allowed values.
	Detail string
	// Line and Column are where the field is in the file Parse read (the
	// nearest enclosing field for a missing one); 0 when not known.
	Line, Column int
}

func (e *FieldError) Error() string {
	msg := fmt.Sprintf("%s %v", e.Field, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Line > 0 {
		msg = fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, msg)
	}
	return msg
}

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, err error, detail string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: err, Detail: fmt.Sprintf(detail, args...)}
}

// instanceType matches SageMaker instance type names such as ml.g5.xlarge.
var instanceType = regexp.MustCompile(`^ml\.[a-z0-9-]+\.[a-z0-9-]+$`)

// Validate checks what can be checked without a server: names, references,
// enums and ranges. The engine checks the rest (its configurable limits).
// It returns the first problem as a *FieldError.
func (c *Config) Validate() error {
	if err := c.validatePolicies(); err != nil {
		return err
	}
	if err := c.validateEnvs(); err != nil {
		return err
	}
	usedEnv := map[string]string{}
	seen := map[string]bool{}
	for i := range c.JobQueues {
		q := &c.JobQueues[i]
		f := fmt.Sprintf("jobQueues[%d]", i)
		if err := unique(f+".name", q.Name, seen); err != nil {
			return err
		}
		if err := c.validateQueue(f, q, usedEnv); err != nil {
			return err
		}
	}
	return c.validateAccessPolicies()
}

func unique(field, name string, seen map[string]bool) error {
	if name == "" {
		return fieldErr(field, ErrRequired, "")
	}
	if seen[name] {
		return fieldErr(field, ErrDuplicate, "%q", name)
	}
	seen[name] = true
	return nil
}

func oneOf(field, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fieldErr(field, ErrEnum, "%q (want one of %v)", v, allowed)
}

func (c *Config) validatePolicies() error {
	seen := map[string]bool{}
	for i, p := range c.SchedulingPolicies {
		f := fmt.Sprintf("schedulingPolicies[%d]", i)
		if err := unique(f+".name", p.Name, seen); err != nil {
			return err
		}
		if p.QuotaSharePolicy != nil {
			if err := oneOf(f+".quotaSharePolicy.idleResourceAssignmentStrategy", p.QuotaSharePolicy.IdleResourceAssignmentStrategy, "FIFO"); err != nil {
				return err
			}
		}
		if p.FairsharePolicy != nil {
			if p.QuotaSharePolicy != nil {
				return fieldErr(f+".fairsharePolicy", ErrRange, "a scheduling policy has a quotaSharePolicy or a fairsharePolicy, not both")
			}
			if err := validateFairshare(f+".fairsharePolicy", p.FairsharePolicy); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Config) validateEnvs() error {
	seen := map[string]bool{}
	for i, e := range c.ServiceEnvironments {
		f := fmt.Sprintf("serviceEnvironments[%d]", i)
		if err := unique(f+".name", e.Name, seen); err != nil {
			return err
		}
		if err := oneOf(f+".type", e.Type, "SAGEMAKER_TRAINING"); err != nil {
			return err
		}
		if err := oneOf(f+".state", e.State, "ENABLED", "DISABLED"); err != nil {
			return err
		}
		if err := validateLimits(f+".capacityLimits", e.CapacityLimits, 0); err != nil {
			return err
		}
	}
	return nil
}

// validateLimits checks a list of capacity limits whose maxCapacity must
// be at least minCapacity.
func validateLimits(field string, ls []CapacityLimit, minCapacity int) error {
	if len(ls) == 0 {
		return fieldErr(field, ErrRequired, "at least one capacity limit")
	}
	seen := map[string]bool{}
	for i, l := range ls {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !instanceType.MatchString(l.CapacityUnit) {
			return fieldErr(f+".capacityUnit", ErrEnum, "%q is not a SageMaker Training instance type such as ml.g5.xlarge", l.CapacityUnit)
		}
		if seen[l.CapacityUnit] {
			return fieldErr(f+".capacityUnit", ErrDuplicate, "%q", l.CapacityUnit)
		}
		seen[l.CapacityUnit] = true
		if l.MaxCapacity < minCapacity {
			return fieldErr(f+".maxCapacity", ErrRange, "%d is below %d", l.MaxCapacity, minCapacity)
		}
	}
	return nil
}

func (c *Config) validateQueue(f string, q *JobQueue, usedEnv map[string]string) error {
	if err := oneOf(f+".state", q.State, "ENABLED", "DISABLED"); err != nil {
		return err
	}
	if q.SchedulingPolicy != "" && c.Policy(q.SchedulingPolicy) == nil {
		return fieldErr(f+".schedulingPolicy", ErrUnknown, "%q", q.SchedulingPolicy)
	}
	if len(q.ServiceEnvironments) == 0 {
		return fieldErr(f+".serviceEnvironments", ErrRequired, "")
	}
	for i, name := range q.ServiceEnvironments {
		if c.Env(name) == nil {
			return fieldErr(fmt.Sprintf("%s.serviceEnvironments[%d]", f, i), ErrUnknown, "%q", name)
		}
	}
	for i, a := range q.JobStateTimeLimitActions {
		if err := validateAction(fmt.Sprintf("%s.jobStateTimeLimitActions[%d]", f, i), a); err != nil {
			return err
		}
	}
	if err := c.validateFairQueue(f, q); err != nil {
		return err
	}
	if !c.QuotaQueue(q) {
		if len(q.QuotaShares) > 0 {
			return fieldErr(f+".quotaShares", ErrRange, "only a queue whose scheduling policy has a quotaSharePolicy has quota shares")
		}
		return nil
	}
	return c.validateQuotaQueue(f, q, usedEnv)
}

func (c *Config) validateQuotaQueue(f string, q *JobQueue, usedEnv map[string]string) error {
	if len(q.ServiceEnvironments) != 1 {
		return fieldErr(f+".serviceEnvironments", ErrRange, "a quota-share queue has exactly one service environment")
	}
	env := q.ServiceEnvironments[0]
	if other, ok := usedEnv[env]; ok {
		return fieldErr(f+".serviceEnvironments[0]", ErrDuplicate, "%q already serves quota-share queue %q", env, other)
	}
	usedEnv[env] = q.Name
	se := c.Env(env)
	seen := map[string]bool{}
	for i := range q.QuotaShares {
		s := &q.QuotaShares[i]
		sf := fmt.Sprintf("%s.quotaShares[%d]", f, i)
		if err := unique(sf+".name", s.Name, seen); err != nil {
			return err
		}
		if err := validateShare(sf, s, se); err != nil {
			return err
		}
	}
	return nil
}

func validateShare(f string, s *QuotaShare, se *ServiceEnvironment) error {
	if err := oneOf(f+".state", s.State, "ENABLED", "DISABLED"); err != nil {
		return err
	}
	if err := validateLimits(f+".capacityLimits", s.CapacityLimits, 1); err != nil {
		return err
	}
	for i, l := range s.CapacityLimits {
		if !hasUnit(se.CapacityLimits, l.CapacityUnit) {
			return fieldErr(fmt.Sprintf("%s.capacityLimits[%d].capacityUnit", f, i), ErrUnknown,
				"%s is not among the capacity limits of service environment %s", l.CapacityUnit, se.Name)
		}
	}
	rs := s.ResourceSharingConfiguration
	if rs.Strategy == "" {
		return fieldErr(f+".resourceSharingConfiguration.strategy", ErrRequired, "RESERVE, LEND or LEND_AND_BORROW")
	}
	if err := oneOf(f+".resourceSharingConfiguration.strategy", rs.Strategy, "RESERVE", "LEND", "LEND_AND_BORROW"); err != nil {
		return err
	}
	if rs.BorrowLimit != nil && rs.Strategy != "LEND_AND_BORROW" {
		return fieldErr(f+".resourceSharingConfiguration.borrowLimit", ErrRange, "only a LEND_AND_BORROW share has a borrow limit")
	}
	// AWS documents a minimum of -1 (unlimited) and takes an Integer: 32
	// bits. The wording is the API's.
	if rs.BorrowLimit != nil && *rs.BorrowLimit < -1 {
		return fieldErr(f+".resourceSharingConfiguration.borrowLimit", ErrRange, "must be at least -1, not %d", *rs.BorrowLimit)
	}
	if rs.BorrowLimit != nil && *rs.BorrowLimit > math.MaxInt32 {
		return fieldErr(f+".resourceSharingConfiguration.borrowLimit", ErrRange, "must be at most %d, not %d", math.MaxInt32, *rs.BorrowLimit)
	}
	if err := oneOf(f+".preemptionConfiguration.inSharePreemption", s.PreemptionConfiguration.InSharePreemption, "ENABLED", "DISABLED"); err != nil {
		return err
	}
	if s.Sharq != nil {
		if n := s.Sharq.MinimumRuntimeSeconds; n < 0 || n > batchmodel.MaxMinimumRuntimeSeconds {
			return fieldErr(f+".sharq.minimumRuntimeSeconds", ErrRange, "%d is outside 0-%d", n, batchmodel.MaxMinimumRuntimeSeconds)
		}
	}
	return nil
}

func hasUnit(ls []CapacityLimit, unit string) bool {
	for _, l := range ls {
		if l.CapacityUnit == unit {
			return true
		}
	}
	return false
}

func validateAction(f string, a JobStateTimeLimitAction) error {
	if a.Reason == "" {
		return fieldErr(f+".reason", ErrRequired, "")
	}
	if err := oneOf(f+".state", a.State, "RUNNABLE"); err != nil {
		return err
	}
	if err := oneOf(f+".action", a.Action, "CANCEL", "TERMINATE"); err != nil {
		return err
	}
	if a.MaxTimeSeconds < 600 || a.MaxTimeSeconds > 86400 {
		return fieldErr(f+".maxTimeSeconds", ErrRange, "%d is outside 600-86400", a.MaxTimeSeconds)
	}
	return nil
}
