package engine

import (
	"context"
	"strings"

	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// Training jobs: each attempt of a service job runs as a SageMaker training
// job named by the attempt (attemptName). These reads serve the SageMaker
// API's view of them.

// AttemptJob returns the job whose attempt is named attemptID (a training
// job's name), live or ended, or a NotFound error. A live attempt is found
// by the engine's index of them; an ended one among the stored jobs whose
// name begins as the attempt's name says.
func (e *Engine) AttemptJob(ctx context.Context, attemptID string) (record.Job, error) {
	e.rlock()
	if la, ok := e.attempts[attemptID]; ok {
		if j := e.jobs[la.job]; j != nil {
			defer e.mu.RUnlock()
			return e.view(j), nil
		}
	}
	e.mu.RUnlock()
	prefix, ok := attemptJobName(attemptID)
	if !ok {
		return record.Job{}, notFoundf("Training job %s does not exist", attemptID)
	}
	var found *record.Job
	err := e.eachJob(ctx, prefix, func(j record.Job) bool {
		if HasAttempt(&j, attemptID) {
			found = &j
			return false
		}
		return true
	})
	if err != nil {
		return record.Job{}, err
	}
	if found == nil {
		return record.Job{}, notFoundf("Training job %s does not exist", attemptID)
	}
	return *found, nil
}

// AttemptJobs returns every job that has had an attempt, newest first.
func (e *Engine) AttemptJobs(ctx context.Context) ([]record.Job, error) {
	var out []record.Job
	err := e.eachJob(ctx, "", func(j record.Job) bool {
		if len(j.Attempts) > 0 {
			out = append(out, j)
		}
		return true
	})
	return out, err
}

// HasAttempt tells whether one of j's attempts is named attemptID.
func HasAttempt(j *record.Job, attemptID string) bool {
	for _, a := range j.Attempts {
		if strings.HasSuffix(a.ServiceResourceID.Value, "/"+attemptID) {
			return true
		}
	}
	return false
}

// attemptJobName is the beginning of the job name an attempt name carries:
// attemptName keeps "AWSBatch", up to 23 characters of the name and 32 hex
// digits.
func attemptJobName(attemptID string) (string, bool) {
	rest, ok := strings.CutPrefix(attemptID, "AWSBatch")
	if !ok || len(rest) < 32 {
		return "", false
	}
	return rest[:len(rest)-32], true
}

// eachJob calls fn for each job whose name begins with namePrefix (any
// name for ""), newest first, as the engine has it in memory or else as
// stored, until fn returns false.
func (e *Engine) eachJob(ctx context.Context, namePrefix string, fn func(record.Job) bool) error {
	f := store.JobFilter{NamePrefix: namePrefix, Limit: 1000}
	for {
		rows, next, err := e.opts.Store.ListJobs(ctx, f)
		if err != nil {
			return &Error{Code: Internal, Message: "internal error", Err: err}
		}
		jobs := make([]record.Job, 0, len(rows))
		e.rlock()
		for _, r := range rows {
			if j := e.jobs[r.ID]; j != nil {
				jobs = append(jobs, e.view(j))
			} else if j, err := record.DecodeJob(r.Doc); err == nil {
				jobs = append(jobs, *j)
			}
		}
		e.mu.RUnlock()
		for _, j := range jobs {
			if !fn(j) {
				return nil
			}
		}
		if next == "" {
			return nil
		}
		f.After = next
	}
}
