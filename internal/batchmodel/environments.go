package batchmodel

import (
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

func putEnv(se *Env) Put {
	return Put{Kind: KindEnv, ARN: se.ServiceEnvironmentArn, Record: &se.ServiceEnvironment}
}

// checkCapacityLimits checks the capacity limits of what (a service
// environment or a quota share) against AWS's rules.
func (m *Model) checkCapacityLimits(what string, ls []record.CapacityLimit) error {
	if len(ls) == 0 {
		return invalidf("%s requires at least one capacity limit", what)
	}
	if len(ls) > m.cfg.MaxCapacityLimits {
		return invalidf("%s supports at most %d capacity limits", what, m.cfg.MaxCapacityLimits)
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if !trainingjob.ValidInstanceType(l.CapacityUnit) {
			return invalidf("capacityUnit %q is not a SageMaker Training instance type (such as ml.g5.xlarge)", l.CapacityUnit)
		}
		if seen[l.CapacityUnit] {
			return invalidf("capacityUnit %s is listed more than once", l.CapacityUnit)
		}
		seen[l.CapacityUnit] = true
		if l.MaxCapacity < 0 {
			return invalidf("maxCapacity must be at least 0")
		}
	}
	return nil
}

func unitsOf(ls []record.CapacityLimit) []core.UnitCount {
	out := make([]core.UnitCount, len(ls))
	for i, l := range ls {
		out[i] = core.UnitCount{Unit: l.CapacityUnit, Count: l.MaxCapacity}
	}
	return out
}

func envEvent(se *Env) core.PutEnv {
	return core.PutEnv{Name: se.ServiceEnvironmentName, Limits: unitsOf(se.CapacityLimits), Disabled: se.State == Disabled}
}

// CreateServiceEnvironment makes a SAGEMAKER_TRAINING service environment.
func (m *Model) CreateServiceEnvironment(in CreateServiceEnvironmentInput) (record.ServiceEnvironment, Change, error) {
	if m.envs[in.Name] != nil {
		return record.ServiceEnvironment{}, Change{}, conflictf(msgExists)
	}
	if in.Type != typeSageMaker {
		return record.ServiceEnvironment{}, Change{}, invalidf("serviceEnvironmentType must be SAGEMAKER_TRAINING")
	}
	if err := m.checkCapacityLimits("A service environment", in.CapacityLimits); err != nil {
		return record.ServiceEnvironment{}, Change{}, err
	}
	se := &Env{record.ServiceEnvironment{
		ServiceEnvironmentName: in.Name, ServiceEnvironmentArn: m.cfg.Base.ServiceEnvironment(in.Name),
		ServiceEnvironmentType: in.Type, State: orDefault(in.State, Enabled), Status: statusValid,
		CapacityLimits: in.CapacityLimits, Tags: in.Tags,
	}}
	return se.ServiceEnvironment, Change{Events: []core.Event{envEvent(se)}, Puts: []Put{putEnv(se)}, env: se}, nil
}

// UpdateServiceEnvironment changes an environment's capacity limits or
// state.
func (m *Model) UpdateServiceEnvironment(in UpdateServiceEnvironmentInput) (record.ServiceEnvironment, Change, error) {
	se, err := m.findEnv(in.ServiceEnvironment)
	if err != nil {
		return record.ServiceEnvironment{}, Change{}, err
	}
	next := *se
	if in.CapacityLimits != nil {
		if err := m.checkCapacityLimits("A service environment", in.CapacityLimits); err != nil {
			return record.ServiceEnvironment{}, Change{}, err
		}
		next.CapacityLimits = in.CapacityLimits
	}
	if in.State != "" {
		next.State = in.State
	}
	return next.ServiceEnvironment, Change{Events: []core.Event{envEvent(&next)}, Puts: []Put{putEnv(&next)}, env: &next}, nil
}

// DeleteServiceEnvironment deletes a DISABLED environment no job queue
// uses.
func (m *Model) DeleteServiceEnvironment(nameOrArn string) (Change, error) {
	se, err := m.findEnv(nameOrArn)
	if err != nil {
		return Change{}, err
	}
	if se.State != Disabled {
		return Change{}, conflictf("Service environment %s must be DISABLED before it is deleted", se.ServiceEnvironmentName)
	}
	for _, q := range m.Queues() {
		if q.env == se.ServiceEnvironmentName {
			return Change{}, conflictf("Service environment %s is still associated with job queue %s", se.ServiceEnvironmentName, q.JobQueueName)
		}
	}
	return Change{
		Events:  []core.Event{core.DeleteEnv{Name: se.ServiceEnvironmentName}},
		Deleted: []string{se.ServiceEnvironmentArn},
		del:     deletion{kind: KindEnv, name: se.ServiceEnvironmentName},
	}, nil
}

// DescribeServiceEnvironments returns a page of the environments named
// (those that exist), or of all by name.
func (m *Model) DescribeServiceEnvironments(namesOrArns []string, p Page) ([]record.ServiceEnvironment, string) {
	var all []record.ServiceEnvironment
	if len(namesOrArns) > 0 {
		for _, n := range namesOrArns {
			if se, err := m.findEnv(n); err == nil {
				all = append(all, se.ServiceEnvironment)
			}
		}
	} else {
		for _, se := range m.envs {
			all = append(all, se.ServiceEnvironment)
		}
		slices.SortFunc(all, func(a, b record.ServiceEnvironment) int {
			return strings.Compare(a.ServiceEnvironmentName, b.ServiceEnvironmentName)
		})
	}
	return paginate(all, p, func(x record.ServiceEnvironment) string { return x.ServiceEnvironmentName })
}
