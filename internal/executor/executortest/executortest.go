// Package executortest changes an executor's updates on their way to the
// engine, for tests of how the engine and the APIs above it cope with
// updates that lack something a real executor may leave out.
package executortest

import "github.com/sharq-dev/sharq/internal/executor"

// MapUpdates returns ex with each of its updates passed through f.
func MapUpdates(ex executor.Executor, f func(executor.Update) executor.Update) executor.Executor {
	m := &mapped{Executor: ex, ch: make(chan executor.Update, 1024)}
	go func() {
		for u := range ex.Updates() {
			m.ch <- f(u)
		}
		close(m.ch)
	}()
	return m
}

type mapped struct {
	executor.Executor
	ch chan executor.Update
}

func (m *mapped) Updates() <-chan executor.Update { return m.ch }

// WithoutReasons returns ex with its updates passed on without their
// reasons, as an executor that cannot say why an attempt ended would send
// them.
func WithoutReasons(ex executor.Executor) executor.Executor {
	return MapUpdates(ex, func(u executor.Update) executor.Update {
		u.Reason = ""
		return u
	})
}
