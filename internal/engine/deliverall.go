package engine

import (
	"context"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// DeliverAll applies several executor updates in one cycle, as Run does
// with updates that arrive together. It is for engines with
// Options.Synchronous: the simulator delivers everything that happens at
// one virtual instant at once (spec 2.3).
func (e *Engine) DeliverAll(ctx context.Context, us []executor.Update) error {
	ops := make([]*op, len(us))
	for i, u := range us {
		ops[i] = &op{fn: func(now time.Time) error { e.handleUpdate(u, now); return nil }}
	}
	return e.cycle(ctx, ops)
}

// SubmitAll submits several jobs in one cycle, as Run's group commit does
// with submissions that arrive together; the simulator submits everything
// due at one virtual instant at once (spec 2.3). ids, when not nil, are
// the job IDs to give, one per input, instead of Options.NewID's. It
// returns each job's record or refusal in order; the error is for the
// cycle as a whole. clientToken idempotency is not offered here: a job
// with a token is refused.
func (e *Engine) SubmitAll(ctx context.Context, ins []SubmitServiceJobInput, ids []string) ([]ServiceJob, []error, error) {
	out := make([]ServiceJob, len(ins))
	errs := make([]error, len(ins))
	ops := make([]*op, len(ins))
	for i, in := range ins {
		ops[i] = &op{fn: func(now time.Time) error {
			out[i], errs[i] = e.submitOne(in, ids, i, now)
			return nil
		}}
	}
	return out, errs, e.cycle(ctx, ops)
}

func (e *Engine) submitOne(in SubmitServiceJobInput, ids []string, i int, now time.Time) (ServiceJob, error) {
	if in.ClientToken != "" {
		return ServiceJob{}, invalidf("clientToken is not supported when submitting several jobs at once")
	}
	demand, err := demandOf(in.ServiceRequestPayload)
	if err != nil {
		return ServiceJob{}, err
	}
	if ids != nil {
		// NB: ops run one at a time with mu held, so swapping the ID source
		// for this job alone is safe.
		newID := e.opts.NewID
		e.opts.NewID = func() string { return ids[i] }
		defer func() { e.opts.NewID = newID }()
	}
	j, err := e.newJob(in, demand, now)
	if err != nil {
		return ServiceJob{}, err
	}
	return j.ServiceJob, nil
}
