package sharqapi

import (
	"context"
	"net/http"
	"path"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

func (h *Handler) shares(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, access.ActionGetShareUsage, access.AnyResource) {
		return
	}
	u, err := h.usage(r.Context())
	if err != nil {
		h.engineError(w, err)
		return
	}
	writeJSON(w, u)
}

// usage gathers every queue with its environment and shares. The queue
// list comes first and shares are matched to it by name, so a queue created
// in between shows without shares rather than shares without a queue.
func (h *Handler) usage(ctx context.Context) (Usage, error) {
	queues, err := h.allQueues(ctx)
	if err != nil {
		return Usage{}, err
	}
	out := Usage{Queues: []QueueUsage{}, JobCounts: h.eng.StatusCounts()}
	index := map[string]int{}
	for _, q := range queues {
		qu := QueueUsage{Name: q.JobQueueName, State: q.State, Capacity: []UnitUsage{}, Shares: []Share{}}
		if len(q.ServiceEnvironmentOrder) > 0 {
			// The engine stores the environment's ARN; its name ends it.
			qu.ServiceEnvironment = path.Base(q.ServiceEnvironmentOrder[0].ServiceEnvironment)
			qu.Capacity = UnitsOf(h.eng.EnvUsage(qu.ServiceEnvironment))
		}
		index[q.JobQueueName] = len(out.Queues)
		out.Queues = append(out.Queues, qu)
	}
	for _, s := range h.eng.Shares() {
		i, ok := index[s.Queue]
		if !ok {
			continue
		}
		out.Queues[i].Shares = append(out.Queues[i].Shares, Share{
			Name: s.Share, State: s.State, Strategy: s.Strategy, BorrowLimit: s.BorrowLimit,
			InSharePreemption: s.InSharePreemption, MinimumRuntimeSeconds: int(s.MinimumRuntime / time.Second),
			Runnable: s.Runnable, Units: UnitsOf(s.Units),
		})
	}
	return out, nil
}

func (h *Handler) allQueues(ctx context.Context) ([]record.JobQueue, error) {
	var all []record.JobQueue
	p := engine.Page{}
	for {
		qs, next, err := h.eng.DescribeJobQueues(ctx, nil, p)
		if err != nil {
			return nil, err
		}
		all = append(all, qs...)
		if next == "" {
			return all, nil
		}
		p.NextToken = next
	}
}

// UnitsOf is a pool's or share's use of its units on the wire.
func UnitsOf(us []core.UnitUsage) []UnitUsage {
	out := make([]UnitUsage, len(us))
	for i, u := range us {
		out[i] = UnitUsage{Unit: u.Unit, Limit: u.Limit, Used: u.Used, Own: u.Own, Borrowed: u.Borrowed, Lent: u.Lent, Idle: u.Idle,
			BorrowedFrom: shareCounts(u.BorrowedFrom), LentTo: shareCounts(u.LentTo)}
	}
	return out
}

func shareCounts(cs []core.ShareCount) []ShareCount {
	var out []ShareCount
	for _, c := range cs {
		out = append(out, ShareCount{Share: c.Share, Count: c.Count, Reclaimable: c.Reclaimable})
	}
	return out
}
