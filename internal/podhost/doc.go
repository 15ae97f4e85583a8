// Package podhost is the SageMaker training contract inside a job's pod on
// Kubernetes: two hidden verbs of the sharq binary that the kube executor's
// pods run, so that a pod's host gets what the local executor gives its
// hosts, from the same packages (optml for the tree, s3data for the bytes).
//
//	sharq __sm stage [--root DIR] [--bin DIR]
//
// runs in the pod's init container, from sharq's own image. It reads the
// host's Spec from the SHARQ_SM_HOST variable (JSON), copies the sharq
// binary and the Spec into --bin (an emptyDir the training container
// mounts too, as Argo's emissary does), writes the host's /opt/ml tree into
// --root (the emptyDir mounted at /opt/ml) with optml.Write, restores the
// checkpoint directory from CheckpointConfig.S3Uri and stages the channels
// that are not on a volume (ShardedByS3Key by the host's index). It prints
// what it does, a channel's bytes every second ("Downloading input data:
// channel train for algo-1, 1.5 GiB of 4.0 GiB"), and the kube executor
// reads its last line into the job's STARTING reason. A failure
// ("ClientError: channel train: s3://...: why") is written to the
// container's termination message, which the executor makes the job's
// reason.
//
//	sharq __sm run [--root DIR] [--spec FILE] -- CMD [ARG...]
//
// is the training container's entrypoint: it runs the job's command
// (ContainerEntrypoint and ContainerArguments; without them SageMaker's
// "train", looked up in the image's PATH), forwards SIGTERM and SIGINT to
// it (reaping the orphans it leaves, as the container's first process),
// and once it has exited uploads the host's model/ and output/data/ and
// the checkpoint directory, then exits with the job's exit code. Its
// termination message is the failure file's text (/opt/ml/output/failure,
// as SageMaker's FailureReason) or, when sharq's own upload failed,
// "ClientError: uploading the model: ...".
//
// The model and output archives hold every host's files: the other hosts
// hand theirs to algo-1 through S3 (parts.go). Only algo-1 saves the
// checkpoints; every host restores them (see docs/decisions.md).
//
// S3 is reached as the SHARQ_S3_* variables say (endpoint, region, path
// style and, from a Secret, access keys); without keys the AWS SDK's
// default chain in the pod applies (its service account's role through
// IRSA, the node's role). The job's command gets the pod's environment
// without sharq's S3 keys.
package podhost
