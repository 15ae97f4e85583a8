package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// Fair-share queues: a queue whose scheduling policy has a fairsharePolicy
// is scheduled by the core's fair-share rules (docs/fair-share.md). The
// policy is kept as the client sent it; these read it.

// ShareIdentifiersOverlap tells whether two shareDistribution entries can
// match one share identifier: equal, or one a prefix entry ("UserA*") that
// the other starts with. AWS: "you can't have one that specifies a
// shareIdentifier of UserA* and another that specifies a shareIdentifier of
// UserA-1".
func ShareIdentifiersOverlap(a, b string) bool {
	pa, wa := strings.CutSuffix(a, "*")
	pb, wb := strings.CutSuffix(b, "*")
	return a == b || (wa && strings.HasPrefix(pb, pa)) || (wb && strings.HasPrefix(pa, pb))
}

// fairsharePolicy is the part of AWS's FairsharePolicy the core uses.
type fairsharePolicy struct {
	ShareDecaySeconds  int `json:"shareDecaySeconds"`
	ComputeReservation int `json:"computeReservation"`
	ShareDistribution  []struct {
		ShareIdentifier string   `json:"shareIdentifier"`
		WeightFactor    *float64 `json:"weightFactor"`
	} `json:"shareDistribution"`
}

// fairOf is the fair-share policy of the queue's scheduling policy, or nil.
func (e *Engine) fairOf(q *queueRec) *core.FairShare {
	if !e.fairQueue(q) {
		return nil
	}
	p := e.policies[q.SchedulingPolicyArn]
	f, err := decodeFairshare(p.FairsharePolicy)
	if err != nil {
		// Checked when the policy was stored; a policy that no longer reads
		// schedules with the defaults rather than as FIFO.
		return &core.FairShare{}
	}
	return f
}

func decodeFairshare(raw json.RawMessage) (*core.FairShare, error) {
	var p fairsharePolicy
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("fairsharePolicy: %w", err)
	}
	f := &core.FairShare{DecaySeconds: p.ShareDecaySeconds, Reservation: p.ComputeReservation}
	for _, d := range p.ShareDistribution {
		w := 1.0
		if d.WeightFactor != nil {
			w = *d.WeightFactor
		}
		f.Weights = append(f.Weights, core.ShareWeight{Identifier: d.ShareIdentifier, Weight: w})
	}
	return f, nil
}

// isFair tells whether a scheduling policy is a fair-share one.
func (e *Engine) isFair(arn string) bool {
	p := e.policies[arn]
	return p != nil && len(p.FairsharePolicy) > 0
}

// fairQueue tells whether q is scheduled by fair share.
func (e *Engine) fairQueue(q *queueRec) bool {
	return !q.fifo && e.isFair(q.SchedulingPolicyArn)
}

// sharedEnvs counts the stored queues of each service environment, so that
// load keeps FIFO a fair-share queue stored beside others (queueRec.fifo).
func sharedEnvs(rs []store.Resource) map[string]int {
	n := map[string]int{}
	for _, r := range rs {
		if r.Kind != kindQueue {
			continue
		}
		if doc, err := record.DecodeJobQueue(r.Doc); err == nil && len(doc.ServiceEnvironmentOrder) > 0 {
			n[resourceName(doc.ServiceEnvironmentOrder[0].ServiceEnvironment, "service-environment")]++
		}
	}
	return n
}

// refreshFairQueues gives the core the policy of every queue that uses
// it, after the policy changed.
func (e *Engine) refreshFairQueues(policyArn string) error {
	for _, q := range e.sortedQueues() {
		if q.SchedulingPolicyArn == policyArn {
			if err := coreErr(e.core.Apply(e.queueEvent(q))); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadFairUsage sets, for every fair-share queue, each share identifier's
// decayed usage from the store's attempts: a stopped attempt counts from
// startedAt to stoppedAt, the current attempt of a dispatched job from its
// dispatch to now.
func (e *Engine) loadFairUsage(ctx context.Context, now time.Time) error {
	for _, q := range e.sortedQueues() {
		f := e.fairOf(q)
		if f == nil {
			continue
		}
		window := float64(f.DecaySeconds)
		if window == 0 {
			window = core.DefaultDecaySeconds
		}
		usage := map[string]float64{}
		add := func(j *record.Job) {
			if j.ShareIdentifier == "" {
				return
			}
			n := 0
			for _, d := range j.Demand {
				n += d.Count
			}
			u := usage[j.ShareIdentifier]
			for _, iv := range heldIntervals(j, now) {
				u += fairContribution(n, now.Sub(iv[1]).Seconds(), iv[1].Sub(iv[0]).Seconds(), window)
			}
			usage[j.ShareIdentifier] = u
		}
		after := ""
		for {
			page, next, err := e.opts.Store.ListJobs(ctx, store.JobFilter{Queue: q.JobQueueArn, Limit: 1000, After: after})
			if err != nil {
				return fmt.Errorf("read the jobs of fair-share queue %s: %w", q.JobQueueName, err)
			}
			for _, sj := range page {
				j := e.jobs[sj.ID] // a live one as loaded
				if j == nil {
					var err error
					if j, err = decodeJob(sj); err != nil {
						return err
					}
				}
				add(j)
			}
			if next == "" {
				break
			}
			after = next
		}
		for _, id := range slices.Sorted(maps.Keys(usage)) {
			if err := e.core.Apply(core.SetUsage{Queue: q.JobQueueName, Share: id, Usage: usage[id], At: now.UnixNano()}); err != nil {
				return fmt.Errorf("usage of share identifier %s in job queue %s: %w", id, q.JobQueueName, err)
			}
		}
	}
	return nil
}

// heldIntervals are the spans during which a job held capacity, as far as
// the store tells: each attempt's start to stop, and a dispatched job's
// current attempt from its dispatch to now.
func heldIntervals(j *record.Job, now time.Time) [][2]time.Time {
	var out [][2]time.Time
	for i, a := range j.Attempts {
		current := i == len(j.Attempts)-1 && dispatchedStatus(j.Status)
		switch {
		case current && j.DispatchedAt > 0:
			out = append(out, [2]time.Time{time.Unix(0, j.DispatchedAt), now})
		case a.StartedAt > 0 && a.StoppedAt >= a.StartedAt:
			out = append(out, [2]time.Time{time.UnixMilli(a.StartedAt), time.UnixMilli(a.StoppedAt)})
		}
	}
	return out
}

// fairContribution is what n instances held for dur seconds, ending ago
// seconds before now, add to decayed usage: core.Decay over the span, then
// decayed for the time since.
func fairContribution(n int, ago, dur, window float64) float64 {
	if dur <= 0 || n <= 0 {
		return 0
	}
	return core.Decay(core.Decay(0, n, dur, window), 0, max(0, ago), window)
}
