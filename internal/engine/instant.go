package engine

import (
	"context"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
)

// Instant is what happens at one instant of a driven engine's clock,
// applied together in one cycle (spec 2.3): the simulator gathers every
// change due at a virtual instant into one. The changes are applied in
// this order: executor updates (so that an attempt ending at the instant
// has ended before anything else is considered), submissions, job changes
// in the order given, then housekeeping.
type Instant struct {
	Updates []executor.Update
	Submits []SubmitServiceJobInput
	// IDs, when not nil, are the job IDs to give Submits, one each,
	// instead of Options.NewID's.
	IDs     []string
	Changes []JobChange
	// Housekeeping runs time limit actions and retention, as Run does
	// every second.
	Housekeeping bool
	// NoRecords leaves InstantResult.Jobs empty, for a caller that knows
	// its jobs by the IDs it gave: a copy of each record is not free.
	NoRecords bool
}

// JobChange is a priority update or a termination of one job.
type JobChange struct {
	Job       string
	Priority  int
	Terminate bool
	Reason    string // why it is terminated
}

// InstantResult says how each submission and change of an Instant went.
type InstantResult struct {
	Jobs       []record.Job // each submitted job's record, in order
	SubmitErrs []error      // each submission's refusal, or nil
	ChangeErrs []error      // each change's refusal, or nil
}

// ApplyInstant applies in one cycle everything that happens at one
// instant. It is for driven engines (Options.Driver). clientToken
// idempotency is not offered to its submissions: a job with a token is
// refused. The error is for the cycle as a whole.
func (e *Engine) ApplyInstant(ctx context.Context, in Instant) (InstantResult, error) {
	res := InstantResult{SubmitErrs: make([]error, len(in.Submits)), ChangeErrs: make([]error, len(in.Changes))}
	if !in.NoRecords {
		res.Jobs = make([]record.Job, len(in.Submits))
	}
	aside := readAside(ctx, e, in.Changes, changedJob)
	return res, e.drive(ctx, e.instantOps(in, &res, aside))
}

func changedJob(c JobChange) string { return c.Job }

// instantOps are the changes of in, in the order they apply, each writing
// its outcome into res: one op for them all, as an op per change would
// cost its allocations.
func (e *Engine) instantOps(in Instant, res *InstantResult, aside asideJobs) []*op {
	return []*op{{change: changeFunc(func(c *cycle) error {
		for _, u := range in.Updates {
			e.handleUpdate(c, u)
		}
		for i, s := range in.Submits {
			id := ""
			if in.IDs != nil {
				id = in.IDs[i]
			}
			j, err := e.submitOne(c, s, id)
			if j != nil && res.Jobs != nil {
				res.Jobs[i] = *j
			}
			res.SubmitErrs[i] = err
		}
		for i, ch := range in.Changes {
			if ch.Terminate {
				res.ChangeErrs[i] = e.terminate(c, ch.Job, ch.Reason, aside)
			} else {
				_, res.ChangeErrs[i] = e.setPriority(c, ch.Job, ch.Priority, aside)
			}
		}
		if in.Housekeeping {
			return e.housekeeping(c)
		}
		return nil
	})}}
}

// Deliver applies an executor update in its own cycle. It is for
// driven engines; Run reads updates from the executor itself.
func (e *Engine) Deliver(ctx context.Context, u executor.Update) error {
	_, err := e.ApplyInstant(ctx, Instant{Updates: []executor.Update{u}})
	return err
}

// Tick runs housekeeping (time limit actions, retention) in its own cycle,
// for driven engines.
func (e *Engine) Tick(ctx context.Context) error {
	_, err := e.ApplyInstant(ctx, Instant{Housekeeping: true})
	return err
}

// submitOne submits a job of an Instant, with the ID given or, when it is
// "", Options.NewID's.
func (e *Engine) submitOne(c *cycle, in SubmitServiceJobInput, id string) (*record.Job, error) {
	if in.ClientToken != "" {
		return nil, invalidf("clientToken is not supported when submitting several jobs at once")
	}
	_, demand, err := readPayload(in.ServiceRequestPayload, in.Request)
	if err != nil {
		return nil, err
	}
	return e.newJob(c, in, id, demand)
}
