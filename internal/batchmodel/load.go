package batchmodel

import (
	"fmt"
	"slices"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// Restore is a core event that restores a stored resource, and what it
// restores, to name in an error.
type Restore struct {
	What  string
	Event core.Event
}

// FIFOQueue is a job queue with a fair-share policy that was stored
// sharing its service environment with other queues, as it could before
// fair share was scheduled: it stays FIFO.
type FIFOQueue struct {
	Queue, Env string
}

// Load puts stored resources into an empty model and returns the core
// events that restore them, in order: environments, then queues, then
// shares, each referring to the ones before. Queues and shares are
// restored enabled: the core takes no job into a DISABLED queue or share,
// but the jobs waiting in one were accepted before it was disabled; once
// they are back, DisabledEvents disables them.
func (m *Model) Load(rs []store.Resource) ([]Restore, []FIFOQueue, error) {
	order := []string{KindEnv, KindPolicy, KindQueue, KindShare}
	slices.SortStableFunc(rs, func(a, b store.Resource) int {
		return slices.Index(order, a.Kind) - slices.Index(order, b.Kind)
	})
	shared := sharedEnvs(rs)
	var out []Restore
	var fifo []FIFOQueue
	for _, r := range rs {
		ev, err := m.load(r, shared, &fifo)
		if err != nil {
			return nil, nil, fmt.Errorf("load %s %s: %w", r.Kind, r.ARN, err)
		}
		if ev != nil {
			out = append(out, Restore{What: fmt.Sprintf("load %s %s", r.Kind, r.ARN), Event: ev})
		}
	}
	return out, fifo, nil
}

func (m *Model) load(r store.Resource, shared map[string]int, fifo *[]FIFOQueue) (core.Event, error) {
	switch r.Kind {
	case KindEnv:
		doc, err := record.DecodeServiceEnvironment(r.Doc)
		if err != nil {
			return nil, err
		}
		se := &Env{ServiceEnvironment: *doc}
		m.envs[se.ServiceEnvironmentName] = se
		return envEvent(se), nil
	case KindPolicy:
		doc, err := record.DecodeSchedulingPolicy(r.Doc)
		if err != nil {
			return nil, err
		}
		p := &Policy{SchedulingPolicy: *doc}
		m.policies[p.Arn] = p
	case KindQueue:
		doc, err := record.DecodeJobQueue(r.Doc)
		if err != nil {
			return nil, err
		}
		q := &Queue{JobQueue: *doc, shares: map[string]*Share{}}
		if q.StatusReason == "record.JobQueue Healthy" {
			// Stored by releases that misspelt it.
			q.StatusReason = queueHealthy
		}
		if len(q.ServiceEnvironmentOrder) > 0 {
			q.env = resourceName(q.ServiceEnvironmentOrder[0].ServiceEnvironment, KindEnv)
		}
		p := m.policies[q.SchedulingPolicyArn]
		if p != nil {
			q.quota = p.QuotaSharePolicy != nil
		}
		if isFair(p) && shared[q.env] > 1 {
			q.fifo = true
			*fifo = append(*fifo, FIFOQueue{Queue: q.JobQueueName, Env: q.env})
		}
		m.queues[q.JobQueueName] = q
		ev := m.queueEvent(q)
		ev.Disabled = false // until the jobs are back: see DisabledEvents
		return ev, nil
	case KindShare:
		doc, err := record.DecodeQuotaShare(r.Doc)
		if err != nil {
			return nil, err
		}
		s := &Share{QuotaShare: *doc}
		q := m.queues[resourceName(s.JobQueueArn, KindQueue)]
		if q == nil {
			return nil, fmt.Errorf("job queue %s is missing", s.JobQueueArn)
		}
		s.queue = q.JobQueueName
		q.shares[s.QuotaShareName] = s
		ev, err := shareEvent(q, &s.QuotaShare)
		if err != nil {
			return nil, err
		}
		ev.Disabled = false // until the jobs are back: see DisabledEvents
		return ev, nil
	}
	return nil, nil
}

// sharedEnvs counts the stored queues of each service environment, so that
// Load keeps FIFO a fair-share queue stored beside others (Queue.fifo).
func sharedEnvs(rs []store.Resource) map[string]int {
	n := map[string]int{}
	for _, r := range rs {
		if r.Kind != KindQueue {
			continue
		}
		if doc, err := record.DecodeJobQueue(r.Doc); err == nil && len(doc.ServiceEnvironmentOrder) > 0 {
			n[resourceName(doc.ServiceEnvironmentOrder[0].ServiceEnvironment, KindEnv)]++
		}
	}
	return n
}

// DisabledEvents are the core events that disable the DISABLED queues and
// shares Load restored enabled.
func (m *Model) DisabledEvents() ([]Restore, error) {
	var out []Restore
	for _, q := range m.Queues() {
		if q.State == Disabled {
			out = append(out, Restore{What: "disable job queue " + q.JobQueueName, Event: m.queueEvent(q)})
		}
		for _, name := range q.ShareNames() {
			s := q.shares[name]
			if s.State != Disabled {
				continue
			}
			ev, err := shareEvent(q, &s.QuotaShare)
			if err != nil {
				return nil, fmt.Errorf("disable quota share %s: %w", s.QuotaShareArn, err)
			}
			out = append(out, Restore{What: "disable quota share " + s.QuotaShareArn, Event: ev})
		}
	}
	return out, nil
}

// CoreEvents are the events that rebuild the model's resources in a new
// core, as they are now: environments, then each queue with its shares.
func (m *Model) CoreEvents() ([]core.Event, error) {
	var out []core.Event
	for _, name := range m.EnvNames() {
		out = append(out, envEvent(m.envs[name]))
	}
	for _, q := range m.Queues() {
		out = append(out, m.queueEvent(q))
		for _, name := range q.ShareNames() {
			ev, err := shareEvent(q, &q.shares[name].QuotaShare)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
	}
	return out, nil
}
