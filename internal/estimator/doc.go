// Package estimator keeps the start estimates of the waiting jobs fresh:
// when each is expected to start, from a run of a copy of the core forward
// in virtual time (package forecast).
//
// It sits on the shell side, beside forecast: forecast is the function of
// data, the estimator the state and the goroutine around it. It owns the
// latest result, the run times of the jobs that ended (the history a job
// without a declared bound is estimated from), what never changes of the
// live jobs (their share, capacity and bounds, read once per job and kept)
// and the goroutine that computes in the background. The engine feeds it
// (RecordRunTime as attempts succeed, NoteCycle after each committed
// cycle) and lends it a Source to copy the core from, which it calls only
// when a computation runs. It imports nothing of the engine.
//
// Invariants:
//   - One computation at a time; a Source call is the only part of one
//     that holds the engine back.
//   - The background computes only while someone reads the estimates
//     (Latest): after a cycle that changed something, or once the first
//     end the last result expected has come, and never sooner after the
//     last computation than four times what it took (at least
//     minGap): it takes at most a fifth of a CPU.
//   - When nobody has read the estimates for a minute (interest), a cycle
//     marks them stale instead, and the next read computes them before it
//     answers: a server that nobody asks spends nothing on them.
//   - A panic while computing (a broken invariant of the copied core) is
//     an error of that computation; the engine's own state is untouched.
package estimator
