// Package readmodel builds the views of the scheduler's state that sharq
// shows beyond the AWS Batch API: each queue's service environment and
// quota shares with their capacity (own, borrowed, lent, idle), where a
// waiting job stands in its share and why, whose capacity a running job
// holds, and when waiting jobs are expected to start.
//
// One model, three readers: sharqapi serves these views as JSON, the
// console (package web) renders them, and the CLI reads them back from
// sharqapi. The types are therefore the wire shapes, lowerCamelCase JSON
// like the AWS Batch API's; a change to a field name or order changes what
// servers answer. The functions only read the engine.
package readmodel

import (
	"context"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
)

// Engine is what the views are built from; *engine.Engine implements it.
type Engine interface {
	DescribeJobQueues(ctx context.Context, namesOrArns []string, p batchmodel.Page) ([]record.JobQueue, string, error)
	Shares() []engine.ShareState
	EnvUsage(name string) []core.UnitUsage
	StatusCounts() map[string]int
	JobPosition(id string) (core.JobStatus, bool)
	HoldingsOf(ids []string) map[string]core.Holding
	LatestStartEstimates() *forecast.Result
}

var _ Engine = (*engine.Engine)(nil)

// UsageOf gathers every queue with its environment and shares. The queue
// list comes first and shares are matched to it by name, so a queue created
// in between shows without shares rather than shares without a queue.
func UsageOf(ctx context.Context, eng Engine) (Usage, error) {
	queues, err := Queues(ctx, eng)
	if err != nil {
		return Usage{}, err
	}
	out := Usage{Queues: make([]QueueUsage, 0, len(queues)), JobCounts: eng.StatusCounts()}
	shares := SharesByQueue(eng)
	for _, q := range queues {
		qu := QueueUsage{Name: q.JobQueueName, State: q.State, Capacity: []UnitUsage{}, Shares: shares[q.JobQueueName]}
		if len(q.ServiceEnvironmentOrder) > 0 {
			env := EnvironmentOf(eng, q.ServiceEnvironmentOrder[0].ServiceEnvironment)
			qu.ServiceEnvironment, qu.Capacity = env.Name, env.Units
		}
		if qu.Shares == nil {
			qu.Shares = []Share{}
		}
		out.Queues = append(out.Queues, qu)
	}
	return out, nil
}

// Queues pages through every job queue, in the engine's order. On an error
// it returns the queues read so far with it.
func Queues(ctx context.Context, eng Engine) ([]record.JobQueue, error) {
	var all []record.JobQueue
	p := batchmodel.Page{}
	for {
		qs, next, err := eng.DescribeJobQueues(ctx, nil, p)
		if err != nil {
			return all, err
		}
		all = append(all, qs...)
		if next == "" {
			return all, nil
		}
		p.NextToken = next
	}
}

// SharesByQueue is every share's standing by its queue's name, each
// queue's shares in the engine's order (by share name).
func SharesByQueue(eng Engine) map[string][]Share {
	out := map[string][]Share{}
	for _, s := range eng.Shares() {
		out[s.Queue] = append(out[s.Queue], ShareOf(s))
	}
	return out
}

// ShareOf is a share's standing.
func ShareOf(s engine.ShareState) Share {
	return Share{Name: s.Share, State: s.State, Strategy: s.Strategy, BorrowLimit: s.BorrowLimit,
		InSharePreemption: s.InSharePreemption, MinimumRuntimeSeconds: int(s.MinimumRuntime / time.Second),
		Runnable: s.Runnable, Units: UnitsOf(s.Units)}
}

// EnvironmentOf is a service environment's capacity; the engine stores
// the environment's ARN, whose last part is its name.
func EnvironmentOf(eng Engine, arnOrName string) Environment {
	name := lastSegment(arnOrName, "service-environment/")
	return Environment{Name: name, Units: UnitsOf(eng.EnvUsage(name))}
}

// UnitsOf is a pool's or share's use of its units.
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

// lastSegment takes the name out of an ARN (…/NAME); a bare name is
// returned as it is.
func lastSegment(s, after string) string {
	if i := strings.LastIndex(s, after); i >= 0 {
		return s[i+len(after):]
	}
	return s
}

// Oversize is a share's limit of a unit above its service environment's
// capacity: AWS accepts it, but the share can never hold more than the
// environment has.
type Oversize struct {
	Unit     string
	Limit    int // the share's
	Capacity int // the environment's
}

// Oversized lists the units of a share (its units) whose limit is above
// the environment's (env) capacity, in the share's order.
func Oversized(env, units []UnitUsage) []Oversize {
	capacity := make(map[string]int, len(env))
	for _, u := range env {
		capacity[u.Unit] = u.Limit
	}
	var out []Oversize
	for _, u := range units {
		if c := capacity[u.Unit]; u.Limit > c {
			out = append(out, Oversize{Unit: u.Unit, Limit: u.Limit, Capacity: c})
		}
	}
	return out
}
