// Package sim replays a workload against a cluster configuration in virtual
// time, with the real engine and scheduling core, and reports what the
// quota design did: utilisation of own, borrowed and lent capacity per
// share, time to dispatch, preemptions and the work they cost.
//
// The simulation is a discrete-event loop over a heap ordered by (time,
// sequence): trace events (submissions, priority changes, cancellations),
// attempt progress scheduled by the simulator's own executor,
// housekeeping ticks, and the cycles the engine asks for when a quota
// share's minimum runtime before preemption ends (Engine.NextWake). Everything due at one instant is applied in one
// engine cycle (engine.ApplyInstant), as scheduling.md 2.3 requires: ends
// of attempts, submissions, priority changes, cancellations and
// housekeeping. The engine is driven (Options.Driver) on a virtual
// clock, with deterministic job IDs and an in-memory store, so nothing sleeps and
// equal inputs give byte-identical reports.
//
// It sits on the shell side: it drives internal/engine exactly as the API
// does, through its exported operations.
package sim
