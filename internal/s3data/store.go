// Package s3data moves a training job's data between S3 (or a local directory)
// and the machine that runs it: channels in (Stage), model, output and
// checkpoints out (UploadArchive, UploadDir) and checkpoints back (DownloadDir).
//
// Transfers go through the AWS SDK for Go v2 and its transfer manager: large
// objects as concurrent ranged GETs, archives as streamed multipart uploads, so
// memory stays flat in the size of the data.
package s3data

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Config says which S3 to talk to and how much of it to keep on local disk.
type Config struct {
	// Endpoint is the S3 endpoint URL; "" means AWS's own
	// (e.g. http://127.0.0.1:9000 for MinIO or moto).
	Endpoint string
	// Region defaults to the region of the usual AWS chain, then us-east-1.
	Region string
	// PathStyle addresses buckets as endpoint/bucket, as most S3 servers
	// other than AWS's need.
	PathStyle bool
	// Profile is a named AWS profile; "" uses the usual credential chain.
	Profile string
	// Credentials, when set, replace the chain (a job's own role, tests).
	Credentials aws.CredentialsProvider
	// CacheDir keeps staged objects between Stage calls; "" disables the cache.
	CacheDir string
	// CacheBytes bounds the cache; the least recently used objects are
	// evicted beyond it. Zero or less means no bound.
	CacheBytes int64
	// Concurrency is the number of objects fetched at once (default 16).
	Concurrency int
	// ReadTimeout is how long a request waits for a byte from the server,
	// its response headers included, before it is retried (default 10 s).
	// Raise it for S3-compatible servers that are slow to start a large
	// ranged GET (moto reads the whole object for each).
	ReadTimeout time.Duration
}

// Tuning that keeps a dead or unreachable server from holding a transfer for
// minutes: the standard retryer with a few attempts and short back-offs, and
// connect and read timeouts. A server that is gone (connection refused) fails
// within a second of back-offs; one that stopped answering fails when the
// attempts' read timeouts have run out, about 30 seconds.
const (
	maxAttempts        = 3
	maxBackoff         = 2 * time.Second
	dialTimeout        = 5 * time.Second
	defaultReadTimeout = 10 * time.Second
	minPartSize        = 8 << 20 // bytes per ranged GET or upload part
	maxPartSize        = 64 << 20
	partConcurrency    = 8 // ranged GETs or parts in flight per object
	defaultConcurrent  = 16
)

// Store moves data for training jobs. It is safe for concurrent use.
type Store struct {
	cfg      Config
	endpoint string // for error messages
	s3       *s3.Client
	tm       *tm.Client
	cache    *cache // nil when caching is off

	mu       sync.Mutex
	uploaded map[string]map[string]stamp // UploadDir's last upload: bucket/prefix -> file -> stamp
}

// New makes a Store. It reads credentials lazily: a missing credential shows
// as an error of the first transfer that needs S3, not here.
func New(ctx context.Context, c Config) (*Store, error) {
	if c.Concurrency <= 0 {
		c.Concurrency = defaultConcurrent
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = defaultReadTimeout
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = dialTimeout }).
		WithReadTimeout(c.ReadTimeout).
		WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = c.Concurrency * partConcurrency
		})
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = maxAttempts
				o.MaxBackoff = maxBackoff
			})
		}),
	}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	if c.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(c.Credentials))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3data: load AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
		// Ranged GETs carry no whole-object checksum; the SDK would log each.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	s := &Store{
		uploaded: map[string]map[string]stamp{},
		cfg:      c,
		endpoint: c.Endpoint,
		s3:       client,
		tm: tm.New(client, func(o *tm.Options) {
			o.PartSizeBytes = minPartSize
			o.Concurrency = partConcurrency
			o.GetObjectType = tmtypes.GetObjectRanges
			// A range whose body breaks off is fetched once more, each
			// time with the retryer's attempts: bounded, as above.
			o.PartBodyMaxRetries = 2
		}),
	}
	if s.endpoint == "" {
		s.endpoint = "https://s3." + awsCfg.Region + ".amazonaws.com"
	}
	if c.CacheDir != "" {
		s.cache, err = openCache(c.CacheDir, c.CacheBytes)
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}
