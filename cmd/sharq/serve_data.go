package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/sharq-dev/sharq/internal/container"
	"github.com/sharq-dev/sharq/internal/executor/local"
	"github.com/sharq-dev/sharq/internal/s3data"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// dataFlags say where jobs' data lives: the S3 service their channels,
// models and checkpoints are read from and written to, and the cache of
// staged objects on this machine.
type dataFlags struct {
	endpoint  string
	region    string
	pathStyle bool
	profile   string
	cacheGiB  float64
	// uploadTTL is how long the built-in S3 keeps a multipart upload
	// never completed.
	uploadTTL time.Duration
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.endpoint, "s3-endpoint", "", "S3 service of the jobs' channels, models and checkpoints, e.g. http://minio:9000, or aws for AWS's own S3 (default: sharq serves S3 itself, for buckets under <data-dir>/s3, on --listen; with --executor kube: AWS's S3)")
	fs.StringVar(&d.region, "s3-region", "", "region of --s3-endpoint's buckets (default: the AWS configuration's, else us-east-1)")
	fs.BoolVar(&d.pathStyle, "s3-path-style", true, "with --s3-endpoint: address buckets as ENDPOINT/BUCKET, as most S3 servers other than AWS's need")
	fs.StringVar(&d.profile, "s3-profile", "", "named AWS profile whose credentials read and write S3 (default: the usual AWS credential chain; never sharq's own access keys)")
	fs.DurationVar(&d.uploadTTL, "s3-upload-expiry", 24*time.Hour, "built-in S3: how long a multipart upload never completed nor aborted is kept before its parts are removed")
	fs.Float64Var(&d.cacheGiB, "s3-cache-size", 20, "GiB of staged S3 objects kept on this machine for later attempts and other jobs (0: keep none)")
}

// credentialWait bounds the look for S3 credentials at start, which on a
// machine outside AWS may ask an instance metadata service that is not
// there.
const credentialWait = 3 * time.Second

// openData makes the local executor's S3 client, and says why S3 cannot
// be used when no endpoint is configured and no credentials are found: the
// executor then refuses jobs that name s3:// URIs at submission.
func openData(ctx context.Context, d dataFlags, dataDir string, builtin *builtinS3) (*s3data.Store, string, error) {
	endpoint := d.endpoint
	if endpoint == awsS3 {
		endpoint = ""
	}
	c := s3data.Config{Endpoint: endpoint, Region: d.region, PathStyle: d.pathStyle && endpoint != "", Profile: d.profile}
	if builtin != nil {
		c.Endpoint, c.PathStyle, c.Profile, c.Credentials = builtin.loopback, true, "", builtin.credentials()
	}
	if d.cacheGiB > 0 {
		c.CacheDir = filepath.Join(dataDir, "cache")
		c.CacheBytes = int64(d.cacheGiB * (1 << 30))
	}
	store, err := s3data.New(ctx, c)
	if err != nil {
		return nil, "", fmt.Errorf("s3: %w", err)
	}
	if builtin != nil {
		return store, "", nil
	}
	// Whether credentials are found is the answer; how the chain looked
	// for them (an instance metadata service that is not there) is noise.
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if d.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(d.profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err == nil {
		look, cancel := context.WithTimeout(ctx, credentialWait)
		_, err = cfg.Credentials.Retrieve(look)
		cancel()
	}
	if err != nil && endpoint == "" {
		return store, "this server has no S3: start sharq serve without --s3-endpoint to serve S3 itself, with --s3-endpoint URL, or with AWS credentials for S3 in its environment", nil
	}
	return store, "", nil
}

// containerFlags say how the local executor runs training images.
type containerFlags struct {
	runtime       string
	imageMap      string
	instanceTypes string
	mountNS       bool
}

func (c *containerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.runtime, "container-runtime", "auto", "local executor: how a job's TrainingImage runs: auto (podman, else docker, found on PATH; else none), podman, docker (or a path to one), or none (every job runs as processes, its ContainerEntrypoint its command)")
	fs.StringVar(&c.imageMap, "image-map", "", "local executor: a file of image names to run instead of others (\"FROM TO\" per line, * patterns), for the AWS images notebooks name")
	fs.BoolVar(&c.mountNS, "mount-namespace", true, "local executor: as root, run each process job in a mount namespace of its own where its tree is at /opt/ml (false: at its own path)")
	fs.StringVar(&c.instanceTypes, "instance-types", "", "local executor: a YAML file of each instance type's cpus, memory (e.g. 16Gi) and gpus, the limits of its containers and the GPUs it gets")
}

// apply sets the local executor's container options.
func (c containerFlags) apply(opts *local.Options, log *slog.Logger) error {
	opts.NoMountNamespace = !c.mountNS
	rt, err := container.Find(c.runtime)
	switch {
	case err != nil && c.runtime == "auto":
		log.Info("no container runtime: jobs run as processes", "why", err)
	case err != nil:
		return fmt.Errorf("--container-runtime: %w", err)
	case rt != nil:
		opts.Runtime = rt
		log.Info("training images run in containers", "runtime", rt.Path)
	}
	if c.imageMap != "" {
		m, err := container.LoadImageMap(c.imageMap)
		if err != nil {
			return fmt.Errorf("--image-map: %w", err)
		}
		opts.ImageMap = m
	}
	if c.instanceTypes != "" {
		limits, gpus, err := readInstanceTypes(c.instanceTypes)
		if err != nil {
			return fmt.Errorf("--instance-types: %w", err)
		}
		opts.InstanceLimits, opts.GPUsPerInstance = limits, gpus
	}
	return nil
}

// instanceType is one entry of the --instance-types file.
type instanceType struct {
	CPUs   float64 `json:"cpus"`
	Memory string  `json:"memory"`
	GPUs   *int    `json:"gpus"`
}

func readInstanceTypes(path string) (map[string]local.InstanceLimits, map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var table map[string]instanceType
	if err := yaml.UnmarshalStrict(b, &table); err != nil {
		return nil, nil, err
	}
	limits, gpus := map[string]local.InstanceLimits{}, map[string]int{}
	for typ, t := range table {
		if !trainingjob.ValidInstanceType(typ) {
			return nil, nil, fmt.Errorf("%q is not a SageMaker Training instance type", typ)
		}
		if t.CPUs < 0 {
			return nil, nil, fmt.Errorf("%s: cpus must not be negative", typ)
		}
		l := local.InstanceLimits{CPUs: t.CPUs}
		if t.Memory != "" {
			q, err := resource.ParseQuantity(t.Memory)
			if err != nil || q.Sign() < 0 {
				return nil, nil, fmt.Errorf("%s: memory %q is not a quantity of bytes such as 16Gi", typ, t.Memory)
			}
			l.MemoryBytes = q.Value()
		}
		limits[typ] = l
		if t.GPUs != nil {
			if *t.GPUs < 0 {
				return nil, nil, fmt.Errorf("%s: gpus must not be negative", typ)
			}
			gpus[typ] = *t.GPUs
		}
	}
	return limits, gpus, nil
}
