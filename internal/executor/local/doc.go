// Package local is the executor backend that runs an attempt as processes on
// this machine, without a container runtime. It sits on the shell side of the
// core/shell boundary and implements executor.Executor.
//
// # What an attempt runs
//
// The attempt's payload is a SageMaker CreateTrainingJob request. Each
// instance (the sum of Attempt.Instances, hosts algo-1..algo-n) runs
// AlgorithmSpecification.ContainerEntrypoint followed by ContainerArguments in
// its own process group, with the payload's Environment and the SageMaker
// training-toolkit variables that make sense locally (SM_HPS, SM_HP_<NAME>,
// SM_HOSTS, SM_CURRENT_HOST, SM_MODEL_DIR, SM_OUTPUT_DATA_DIR,
// SM_CHANNEL_<NAME> for file:// and file-system channels, SM_NUM_GPUS,
// SM_CHECKPOINT_DIR, CUDA_VISIBLE_DEVICES). The attempt succeeds when every
// instance exits 0. When one fails, the others are stopped with the grace
// period and the attempt fails with "exit code N: <stderr tail>".
//
// The checkpoint directory (CheckpointConfig.LocalPath, else
// <DataDir>/checkpoints/<jobID>) outlives attempts, so a requeued job resumes
// from its checkpoint.
//
// A payload that cannot run (bad JSON, no entrypoint, an executable that is
// not found, more GPUs than the machine has) ends in Failed with a reason
// starting "CannotStart:"; it never stays scheduled.
//
// # Stopping
//
// Stop sends SIGTERM to every instance's process group and SIGKILL after the
// grace period; the reason then says "killed with SIGKILL after <grace>
// grace period". The payload environment variable SHARQ_STOP_GRACE_SECONDS
// (a number of seconds) overrides the caller's grace period for that job, and
// also applies to timeouts and to tearing down the other instances after one
// failed. A timeout (Attempt.Timeout or StoppingCondition.MaxRuntimeInSeconds,
// whichever is shorter, counted from Running) ends the attempt in Stopped with
// reason "Attempt duration exceeded".
//
// # Admission
//
// An attempt does not spawn anything (and reports no Starting) until enough
// GPUs are free: each instance gets its own devices through
// CUDA_VISIBLE_DEVICES and two live attempts never share one. Until then
// Attempts reports it as Scheduled. (The engine starts a preemptor only once
// its victims have stopped.)
//
// # Supervisors and restarts
//
// Each attempt runs under a supervisor: the sharq binary started again with
// SupervisorArg, in its own session, so that a restart of the server does not
// kill training. The supervisor owns the instance processes (it is their
// subreaper), does the SIGTERM/SIGKILL and timeout logic, and records the
// attempt in <DataDir>/attempts/<attemptID>/:
//
//	attempt.json    the Start request, written before Start returns
//	launch.json     resolved commands, environments and GPUs
//	state.json      every transition with its time and reason (atomic rename)
//	stop.json       a stop request (reason and grace)
//	lock            flock held by the live supervisor for its whole life
//	logs/<host>.stdout, logs/<host>.stderr
//	hosts/<host>/   the instance's working, model and output directories
//
// The executor learns of transitions through inotify on the attempt
// directory (and a slow poll as a safety net), and of a dead supervisor by
// the lock being free. New reattaches to what it finds: live supervisors are
// watched again, attempts that ended meanwhile are reported by Attempts, an
// attempt whose supervisor died without a final state becomes Lost, and one
// whose supervisor never started is admitted again. Close leaves supervisors
// and their jobs running.
//
// State files are not fsynced: after a power loss an attempt may be reported
// Lost although it ended; the engine retries it.
package local
