// Package core is sharq's quota-share scheduler: a deterministic state machine.
//
// The engine feeds it events with Apply (configuration changes, submissions,
// priority updates, attempts ending) and then calls Step with the current
// time; Step returns the decisions of one scheduling cycle (dispatches,
// preemptions, failures and waiting reasons) as data. The rules are those of
// shared/spec/scheduling.md part 2; fair-share queues follow
// docs/fair-share.md (fairshare.go).
//
// Invariants:
//   - No I/O, clock, goroutines, logging or randomness; the only time the core
//     sees is the now passed to Step. A test enforces that only the standard
//     library is imported. Time passing matters only to minimum runtimes
//     before preemption: NextWake says when a Step is wanted for them.
//   - Equal event sequences and times give byte-equal decisions: every
//     ordering ends with the job ID, and no map order reaches an output.
//   - Handling one event costs O(log n) in queued jobs. A configuration change
//     re-evaluates the jobs of the affected pool and may cost O(n).
//   - A bad event returns an error and changes nothing.
package core
