// Package forecast estimates when waiting jobs will start, as Slurm's
// `squeue --start` does, but with the real scheduler: it runs a copy of the
// scheduling core forward in virtual time, ending each dispatched job when
// it is expected to end and stepping the core at each end (and when a
// minimum runtime before preemption ends, as the core asks), so an estimate
// follows the same rules as the scheduler (quotas, borrowing, priorities,
// cross-share and in-share preemption).
//
// It sits on the shell side, but like the core it is a function of data:
// no clock, no goroutines, no I/O. The engine copies the core, tells how
// long each job runs (Timing), and keeps the Result.
//
// Invariants:
//   - Equal inputs give equal results.
//   - The work is bounded: the run stops at the horizon, after
//     Input.MaxDecisions decisions, or once every waiting job has a start.
//   - A job whose end is not known holds its capacity for the rest of the
//     run; a waiting job not reached while such a job holds capacity in its
//     pool gets NoBasis, never a guess.
package forecast
