// Package local is the executor backend that runs an attempt on this
// machine, as processes or, for a payload with a TrainingImage where a
// container runtime is configured, as containers. It sits on the shell side
// of the core/shell boundary and implements executor.Executor.
//
// # What an attempt runs
//
// The attempt's payload is a SageMaker CreateTrainingJob request, and each
// instance (the sum of Attempt.Instances, hosts algo-1..algo-n) gets what
// SageMaker gives a training container (package optml): its /opt/ml tree
// in <attempt>/hosts/<host> (the three config files, the channels, model/,
// output/, the checkpoint directory) and the contract's environment. As
// processes, it runs AlgorithmSpecification.ContainerEntrypoint followed by
// ContainerArguments in its own process group, with the server's
// environment, the payload's Environment and the contract's variables; as
// root, and when the job uses the contract (usesContract), in a mount
// namespace of its own where its tree is at /opt/ml (mountScript), else
// with its tree at its own path. In a container
// (Options.Runtime), the runtime's foreground `run` is the host's process,
// with the tree, the local channels and the checkpoint directory bound in
// and the hosts on a network of the attempt's own. The attempt succeeds
// when every instance exits 0. When one fails, the others are stopped with
// the grace period and the attempt fails with "exit code N: <the failure
// file's text, else the stderr tail>".
//
// # Data in and out
//
// After admission and before the hand-over to the supervisor, the executor
// writes the trees and stages the channels that are not local (package
// s3data), restores the checkpoint directory from CheckpointConfig.S3Uri,
// and for containers makes sure of the image and makes the network; Starting
// updates carry the progress as their reason. A Stop cancels this; a
// channel that cannot be read fails the attempt ("ClientError: channel
// ..."). Once the supervisor has recorded the end, the executor removes the
// attempt's containers, saves the checkpoints, archives the hosts' model/
// and output/data/ to the output path, and only then records what it did
// in state.json and reports the end, whose reason may change: a success
// whose model cannot be uploaded fails. A restarted executor finishes an
// end it finds without that record.
//
// The checkpoint directory (<DataDir>/checkpoints/<jobID>, or for
// processes a CheckpointConfig.LocalPath outside /opt/ml) outlives
// attempts, so a requeued job resumes from its checkpoint.
//
// A payload that cannot run (bad JSON, no entrypoint and no image to run,
// an executable that is not found, more GPUs than the machine has, an image
// that cannot be had) ends in Failed with a reason starting "CannotStart:";
// it never stays scheduled.
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
// # The supervisor and restarts
//
// Attempts run under the supervisor of the data dir: one process, the
// sharq binary started again with SupervisorArg and the data dir, in a
// session of its own, so that a restart of the server (kill -9 included)
// does not stop training. An attempt costs one process creation, its
// instance's own (one per instance). The executor starts the supervisor
// when it first needs one and none runs; the supervisor exits once no
// executor is connected and no attempt runs. Its files are in DataDir:
//
//	supervisor.lock  flock held by the live supervisor: there is one at most
//	supervisor.sock  where executors reach it (a SOCK_SEQPACKET unix socket, mode 0600)
//	supervisor.log   what it has to say
//
// The executor takes the lock and binds the socket itself, then starts the
// supervisor with both, so that it can connect at once and two executors
// racing to start one end up with the same. Over the socket it hands over
// an attempt ("launch", with the attempt's lock file, locked, attached) and
// asks for a stop ("stop"); everything else goes through files, as before.
// The supervisor owns the instance processes (it is their subreaper),
// does the SIGTERM/SIGKILL and timeout logic, and records each attempt in
// <DataDir>/attempts/<attemptID>/:
//
//	attempt.json    the Start request, written before Start returns
//	launch.json     resolved commands, environments and GPUs
//	state.json      every transition with its time and reason (atomic rename)
//	stop.json       a stop request (reason and grace)
//	lock            flock held by the supervisor while the attempt runs
//	logs/<host>.stdout, logs/<host>.stderr
//	hosts/<host>/   the instance's /opt/ml tree and working directory
//
// The executor learns of transitions through inotify on the attempt
// directory (and a slow poll as a safety net), and of an attempt the
// supervisor let go without an end by its lock being free. If the
// supervisor dies, the instances die with it (Pdeathsig), the executor
// reports every attempt it ran Lost ("attempt processes vanished
// (supervisor ...)"), kills what is left of them, and starts a new
// supervisor for the next attempt. A SIGTERM to the supervisor stops every
// attempt as Stop does, and it exits once they have ended.
//
// New reattaches to what it finds: attempts still locked are watched
// again, attempts that ended meanwhile are reported by Attempts, an
// attempt whose lock is free without a final state becomes Lost, and one
// that never recorded a start is admitted again. An attempt still run by
// the per-attempt supervisor of an older sharq is adopted the same way,
// and stopped with a SIGTERM to that supervisor. Close leaves the
// supervisor and the jobs running.
//
// State files are not fsynced: after a power loss an attempt may be reported
// Lost although it ended; the engine retries it.
package local
