// Package kube is the executor backend that runs an attempt as pods on a
// Kubernetes cluster. sharq decides who runs; the cluster's own
// kube-scheduler binds the pods to nodes. It sits on the shell side of the
// core/shell boundary and implements executor.Executor and
// executor.LogReader.
//
// # Objects
//
// An attempt is one headless Service and one pod per instance (hosts
// algo-1 to algo-N), named after the job and a hash of the attempt ID, so
// that every create is idempotent by attempt ID. The Service owns the pods,
// gives them their DNS names (SM_HOSTS, SM_CURRENT_HOST: algo-N.<service>)
// and carries the attempt's record in an annotation, which is how a
// restarted executor knows its attempts again. Every object is labelled
// app.kubernetes.io/managed-by=sharq, sharq.dev/attempt, sharq.dev/job and
// sharq.dev/term.
// The namespace comes from Options.Namespace, per queue or share with
// {queue} and {share}.
//
// A pod runs AlgorithmSpecification.TrainingImage with ContainerEntrypoint
// and ContainerArguments as command and args, the payload's Environment and
// the SageMaker variables the local executor sets, the resources,
// nodeSelector and tolerations of its instance type in the Table, and
// terminationGracePeriodSeconds = the grace period. RestartPolicy is Never:
// retries are sharq's (retryStrategy), not the kubelet's.
//
// With Options.StagerImage, a pod also carries the SageMaker contract
// (contract.go, package podhost): an init container of sharq's image
// stages the host's /opt/ml into an emptyDir and copies the sharq binary
// into another, and the training container's command is that binary's
// "__sm run" wrapping the job's, which uploads the model and checkpoints
// after it. Both report failures through their termination messages.
//
// # States
//
// Informers on sharq's pods and Services drive a work queue of attempts;
// each is judged from its pods (judge): Starting while any pod is pending
// (reason "Downloading input data" while a stage init container runs, or
// the last line of its log that says how far it is, read every 10 s:
// "Downloading input data: channel train for algo-1, 1.5 GiB of 4.0 GiB"),
// Running once all run, Succeeded once all succeeded, Failed when one
// fails ("exit code N: <reason>: <last log lines>", or the termination
// message in place of reason and lines), whose stage fails (its
// termination message) or cannot pull its image. A pod unschedulable for
// longer than Options.Unschedulable, evicted, or deleted by someone else
// makes the attempt Lost, which the engine
// requeues without using a retry. A timeout (Attempt.Timeout or
// MaxRuntimeInSeconds) counts from Running.
//
// # Ending
//
// To end an attempt (Stop, a failed instance, a timeout, a loss) the
// executor first writes the ending on the Service, then deletes the pods
// that still run with the grace period; the attempt reports its terminal
// state only once they are gone, since their capacity is free only then.
// A pod still there ForceAfter past its grace period is force-deleted and
// the reason says so. Ended attempts keep their pods (for the logs) for
// KeepEnded, then their Service and pods are deleted.
//
// # Terms
//
// Servers that share a store lead in turn, each under a higher term
// (Options.Term). Objects are labelled with the term they were created
// under, and ending an attempt first claims its Service for the executor's
// term, in a JSON patch whose test makes the API server refuse it when a
// newer leader claimed the Service meanwhile. An executor neither creates,
// ends nor deletes objects of a higher term than its own: a leader that
// has lost its lease without knowing it cannot undo its successor's work.
//
// # Restarts
//
// New lists sharq's Services and pods: attempts are adopted with their
// endings, those that ended meanwhile are reported by Attempts, and pods
// whose Service is gone are deleted as orphans. Close stops watching and
// leaves every pod running.
package kube
