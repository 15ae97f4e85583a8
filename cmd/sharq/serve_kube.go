package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/kube"
)

// kubeExecutorWorkers is how many starts and stops go to the API server at
// once by default: each waits tens of milliseconds on it, and 16 at a time
// left a loaded test cluster's API server with capacity to spare.
const kubeExecutorWorkers = 64

// kubeFlags are the options of --executor kube.
type kubeFlags struct {
	kubeconfig    string
	instance      string
	namespace     string
	table         string
	unschedulable time.Duration
	forceAfter    time.Duration
	keepEnded     time.Duration
	qps           int
	stagerImage   string
	s3Secret      string
}

func (k *kubeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kube executor: kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the pod's service account)")
	fs.StringVar(&k.instance, "kube-instance", "sharq", "kube executor: this sharq's name among others on the cluster (label sharq.dev/instance): it adopts and deletes only its own pods")
	fs.StringVar(&k.namespace, "kube-namespace", "sharq", "kube executor: namespace of the jobs' pods; {queue} and {share} in it name one per job queue or quota share")
	fs.StringVar(&k.table, "kube-instance-types", "", "kube executor: the instance-type table, a YAML file (see examples/kube/instance-types.yaml)")
	fs.DurationVar(&k.unschedulable, "kube-unschedulable-timeout", 5*time.Minute, "kube executor: how long a pod may stay unschedulable before its job is requeued")
	fs.DurationVar(&k.forceAfter, "kube-force-delete-after", 30*time.Second, "kube executor: how long a pod may outlive its grace period before it is force-deleted")
	fs.DurationVar(&k.keepEnded, "kube-keep-ended", time.Hour, "kube executor: how long the pods of ended attempts are kept for their logs")
	fs.StringVar(&k.stagerImage, "kube-stager-image", "sharq:latest", "kube executor: sharq's own image (examples/kube/Containerfile), whose init container stages each pod's /opt/ml and whose binary wraps the job to upload its model and checkpoints; empty: pods run the training image alone, without staging or uploads")
	fs.StringVar(&k.s3Secret, "kube-s3-secret", "", "kube executor: a Secret of the pods' namespace with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3 (default: the AWS SDK's chain in the pod, e.g. its service account's role through IRSA; never sharq's own keys)")
	fs.IntVar(&k.qps, "kube-qps", 200, "kube executor: requests a second to the Kubernetes API server, in bursts of twice that")
}

func openKube(cfg serveConfig, log *slog.Logger) (executor.Executor, error) {
	if cfg.kube.table == "" {
		return nil, fmt.Errorf("--executor kube needs --kube-instance-types")
	}
	if cfg.kube.qps <= 0 {
		return nil, fmt.Errorf("--kube-qps must be positive, not %d", cfg.kube.qps)
	}
	table, err := kube.ReadTable(cfg.kube.table)
	if err != nil {
		return nil, fmt.Errorf("--kube-instance-types: %w", err)
	}
	rc, err := kube.LoadConfig(cfg.kube.kubeconfig)
	if err != nil {
		return nil, err
	}
	var held func() bool
	var term int64
	if cfg.lease != nil {
		held, term = cfg.lease.Held, cfg.lease.Term()
	}
	podEndpoint := cfg.data.endpoint
	if podEndpoint == awsS3 {
		podEndpoint = ""
	}
	return kube.New(context.Background(), kube.Options{
		Config: rc, Instance: cfg.kube.instance, Namespace: cfg.kube.namespace, Table: table, DefaultGrace: cfg.grace,
		Unschedulable: cfg.kube.unschedulable, ForceAfter: cfg.kube.forceAfter, KeepEnded: cfg.kube.keepEnded, QPS: cfg.kube.qps,
		Logger: log, Held: held, Term: term, StagerImage: cfg.kube.stagerImage,
		S3: kube.PodS3{Endpoint: podEndpoint, Region: cfg.data.region, PathStyle: cfg.data.pathStyle && podEndpoint != "",
			Secret: cfg.kube.s3Secret},
	})
}
