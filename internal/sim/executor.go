package sim

import (
	"context"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// attempt is one try of a job on the simulated capacity.
type attempt struct {
	id        string
	job       int32
	running   bool
	runningAt time.Duration
	stopped   bool
}

// simExecutor is the executor of a simulation: starting an attempt
// schedules its progress in the simulation's event queue; nothing runs and
// nothing sleeps. It is called from the engine's cycle, in the simulation's
// goroutine.
type simExecutor struct{ s *Sim }

var _ executor.Executor = simExecutor{}

// Start schedules the attempt's instances to come up after the start-up
// delay. The victims it waits for stop at once in a simulation.
func (x simExecutor) Start(ctx context.Context, a executor.Attempt) error {
	s := x.s
	i, ok := s.live[a.JobID]
	if !ok {
		return nil // not a job of the workload: nothing to run
	}
	at := &attempt{id: a.ID, job: i}
	s.attempts[a.ID] = at
	s.jobs[i].attempt = at
	s.push(event{at: s.now + s.opts.StartupDelay, kind: evRunning, att: at})
	return nil
}

// Stop ends an attempt at once, and reports it at the same instant (a
// preemptor starts once its victims have reported). Its work since the last
// checkpoint is lost; the rest is kept, so the next attempt runs only what
// remains.
func (x simExecutor) Stop(ctx context.Context, id string, grace time.Duration) error {
	s := x.s
	at := s.attempts[id]
	if at == nil {
		return nil
	}
	delete(s.attempts, id)
	at.stopped = true
	s.push(event{at: s.now, kind: evStopped, att: at})
	j := &s.jobs[at.job]
	if j.attempt == at {
		j.attempt = nil
	}
	if !at.running {
		return nil
	}
	ran := s.now - at.runningAt
	saved := time.Duration(0)
	if c := s.opts.CheckpointInterval; c > 0 {
		saved = ran / c * c
	}
	j.remaining = max(0, j.remaining-saved)
	j.stoppedWork = ran - saved
	return nil
}

// Updates is never read: a driven engine gets updates through Deliver.
func (simExecutor) Updates() <-chan executor.Update { return nil }

// Attempts is empty: a simulation starts from nothing.
func (simExecutor) Attempts(ctx context.Context) ([]executor.Update, error) { return nil, nil }

func (simExecutor) Close() error { return nil }
