// Package container is sharq's interface to a container runtime on this
// machine: it runs a SageMaker training job's TrainingImage once per host,
// with the host's /opt/ml tree bound in, on a network of the attempt's own
// where the hosts find each other as algo-1 … algo-N.
//
// It drives the runtime's command-line program (podman, or docker where the
// flags agree) rather than a Go API client: podman has no daemon to talk to
// unless a socket service is set up, one code path then serves both runtimes,
// and the command line is the interface both keep stable across versions.
//
// A host's process is a foreground "run --rm" (RunArgv) that the executor
// spawns like any other process: the runtime forwards SIGTERM to the
// container's PID 1 (--sig-proxy) and exits with the container's exit code.
// Stop, Remove and List reach containers by name or label, for a process that
// is gone or a container left over from an earlier run of sharq.
//
// What the runtime does not do for the spawner:
//
//   - SIGKILL cannot be forwarded: killing the run process leaves the
//     container running. After the grace period, Stop or Remove the container
//     by name rather than kill the process; a supervisor that died leaves its
//     containers to be found with List by LabelAttempt.
//   - A name in use makes run fail: Remove the host's name before running it
//     again.
//   - A SIGTERM that arrives while the runtime still creates the container
//     ends the run process alone (podman 4.3 then exits 143, or even 0) and
//     may leave the container created, never started. So a stop ends with
//     Remove of the name, and a run's exit code after a stop was sent does
//     not say the job completed.
//   - With podman, the first container on a network may print "failed to
//     connect to syslog: Initialization" on its standard error: aardvark-dns,
//     the network's name server, finds no syslog on machines without one.
//
// # Podman on these machines
//
// Find gives podman these defaults, which a caller may replace through the
// Runtime's fields:
//
//   - --runtime runc: crun refuses the hybrid cgroup layout (v1 controllers
//     with a v2 mount) of these machines.
//   - --ulimit nofile=1024:1024 --ulimit nproc=4096:4096: podman otherwise
//     raises the container's limits above the caller's, which is not
//     permitted here ("error setting rlimits ... operation not permitted").
//
// Nothing else is needed as root: without systemd podman already picks the
// cgroupfs cgroup manager and the file events logger, and the overlay storage
// driver works on the host's file system.
package container
