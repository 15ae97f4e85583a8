package batchmodel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sharq-dev/sharq/internal/core"
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

// Fair is the fair-share policy job queue q is scheduled by, or nil.
func (m *Model) Fair(q *Queue) *core.FairShare {
	return fairOf(q, m.policies[q.SchedulingPolicyArn])
}

// FairQueue tells whether job queue q is scheduled by fair share.
func (m *Model) FairQueue(q *Queue) bool {
	return !q.fifo && isFair(m.policies[q.SchedulingPolicyArn])
}

// fairOf is the fair-share policy of queue q under scheduling policy p, or
// nil.
func fairOf(q *Queue, p *Policy) *core.FairShare {
	if q.fifo || !isFair(p) {
		return nil
	}
	f, err := decodeFairshare(p.FairsharePolicy)
	if err != nil {
		// Checked when the policy was stored; a policy that no longer reads
		// schedules with the defaults rather than as FIFO.
		return &core.FairShare{}
	}
	return f
}

// isFair tells whether a scheduling policy (nil: none) is a fair-share one.
func isFair(p *Policy) bool { return p != nil && len(p.FairsharePolicy) > 0 }

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
