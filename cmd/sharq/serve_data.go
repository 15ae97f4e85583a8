package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/sharq-dev/sharq/internal/s3data"
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
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.endpoint, "s3-endpoint", "", "S3 service of the jobs' channels, models and checkpoints, e.g. http://minio:9000 (default: AWS's S3)")
	fs.StringVar(&d.region, "s3-region", "", "region of --s3-endpoint's buckets (default: the AWS configuration's, else us-east-1)")
	fs.BoolVar(&d.pathStyle, "s3-path-style", true, "with --s3-endpoint: address buckets as ENDPOINT/BUCKET, as most S3 servers other than AWS's need")
	fs.StringVar(&d.profile, "s3-profile", "", "named AWS profile whose credentials read and write S3 (default: the usual AWS credential chain; never sharq's own access keys)")
	fs.Float64Var(&d.cacheGiB, "s3-cache-size", 20, "GiB of staged S3 objects kept on this machine for later attempts and other jobs (0: keep none)")
}

// credentialWait bounds the look for S3 credentials at start, which on a
// machine outside AWS may ask an instance metadata service that is not
// there.
const credentialWait = 3 * time.Second

// openData makes the local executor's S3 client, and says why S3 cannot
// be used when no endpoint is configured and no credentials are found: the
// executor then refuses jobs that name s3:// URIs at submission.
func openData(ctx context.Context, d dataFlags, dataDir string) (*s3data.Store, string, error) {
	c := s3data.Config{Endpoint: d.endpoint, Region: d.region, PathStyle: d.pathStyle && d.endpoint != "", Profile: d.profile}
	if d.cacheGiB > 0 {
		c.CacheDir = filepath.Join(dataDir, "cache")
		c.CacheBytes = int64(d.cacheGiB * (1 << 30))
	}
	store, err := s3data.New(ctx, c)
	if err != nil {
		return nil, "", fmt.Errorf("s3: %w", err)
	}
	var opts []func(*config.LoadOptions) error
	if d.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(d.profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err == nil {
		look, cancel := context.WithTimeout(ctx, credentialWait)
		_, err = cfg.Credentials.Retrieve(look)
		cancel()
	}
	if err != nil && d.endpoint == "" {
		return store, "this server has no S3: start sharq serve with --s3-endpoint, or with AWS credentials for S3 in its environment", nil
	}
	return store, "", nil
}
