// Package testserver starts, in tests, a sharq server wired as serve wires
// one: the real engine over a real store (SQLite in a temp dir unless the
// test brings its own) and the simulated executor (or the test's), with the
// AWS Batch API, the SageMaker and CloudWatch Logs calls of the SageMaker
// SDK, sharq's routes, the console and /metrics on one mux,
// behind the access middleware when the test names an authenticator, on a
// loopback port. Every package's tests assemble their server here, so that
// what a client sees in a test is what the real parts answer.
//
// It is imported only by tests.
package testserver

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/awsjson"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/logsapi"
	"github.com/sharq-dev/sharq/internal/metrics"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sagemakerapi"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/web"
)

// Tester is the caller AsTester vouches for.
var Tester = access.Identity{AccessKeyID: "AKIDTESTER", Principal: "arn:aws:iam::000000000000:user/tester"}

// AsTester authenticates every request as Tester.
func AsTester() access.Authenticator {
	return access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return Tester, nil })
}

// Options says what a test's server has of its own; the zero value is
// serve's wiring with the engine's defaults, no middleware and the
// simulated executor.
type Options struct {
	// Region and AccountID are the engine's and the handlers' (default:
	// the engine's, us-east-1 and 000000000000).
	Region, AccountID string
	// Store is the engine's store, closed when the test ends. Default: a
	// SQLite store in a temp dir.
	Store store.Store
	// Executor runs the attempts, closed when the test ends. Default: the
	// simulated executor.
	Executor executor.Executor
	// WrapExecutor, when set, is what the engine sees of the executor.
	WrapExecutor func(executor.Executor) executor.Executor
	// Clock, NewID and StopGrace are passed to the engine.
	Clock     engine.Clock
	NewID     func() string
	StopGrace time.Duration
	// Authenticator, when set, puts the access middleware in front of the
	// routes, answering its refusals as the AWS Batch API does.
	Authenticator access.Authenticator
	// Authorizer is asked by every handler (default: allow all).
	Authorizer access.Authorizer
	// Batch, Sharq and Web are the handlers' options; Region, AccountID
	// and Authorizer are filled in from the fields above where unset.
	Batch batchapi.Options
	Sharq sharqapi.Options
	Web   web.Options
	// Wrap, when set, wraps the whole handler (middleware included) once
	// the server is built: for a gate of the test's own.
	Wrap func(*Server, http.Handler) http.Handler
	// Config, when set, is a cluster configuration file applied once the
	// engine runs (examples/announcement.yaml, say).
	Config string
}

// Server is a running test server; everything is closed when the test
// ends.
type Server struct {
	URL       string
	HTTP      *httptest.Server
	Engine    *engine.Engine
	Store     store.Store
	Batch     *batchapi.Handler
	Sharq     *sharqapi.Handler
	Console   *web.Console
	Metrics   *metrics.Metrics
	SageMaker *sagemakerapi.Handler
	Logs      *logsapi.Handler
	region    string
}

// Start starts a server for the test's lifetime.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{Store: opts.Store, region: opts.Region}
	if s.region == "" {
		s.region = "us-east-1"
	}
	if s.Store == nil {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
		if err != nil {
			t.Fatal(err)
		}
		s.Store = st
	}
	ex := opts.Executor
	if ex == nil {
		ex = simulated.New()
	}
	run := ex
	if opts.WrapExecutor != nil {
		run = opts.WrapExecutor(ex)
	}
	for _, o := range []*string{&opts.Batch.Region, &opts.Sharq.Region, &opts.Web.Region} {
		if *o == "" {
			*o = opts.Region
		}
	}
	for _, o := range []*string{&opts.Batch.AccountID, &opts.Sharq.AccountID, &opts.Web.AccountID} {
		if *o == "" {
			*o = opts.AccountID
		}
	}
	for _, o := range []*access.Authorizer{&opts.Batch.Authorizer, &opts.Sharq.Authorizer, &opts.Web.Authorizer} {
		if *o == nil {
			*o = opts.Authorizer
		}
	}
	s.Metrics = metrics.New()
	s.Console = web.New(opts.Web)
	eng, err := engine.New(t.Context(), engine.Options{Region: opts.Region, AccountID: opts.AccountID,
		Store: s.Store, Executor: run, Clock: opts.Clock, NewID: opts.NewID, StopGrace: opts.StopGrace,
		Observers: []jobevents.Observer{s.Metrics, s.Console}})
	if err != nil {
		t.Fatal(err)
	}
	s.Engine = eng
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	// Cleanups run last-in first-out: this one, after the HTTP server's.
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
		ex.Close()
		s.Store.Close()
	})
	if opts.Config != "" {
		cfg, err := clusterconfig.Load(opts.Config)
		if err != nil {
			t.Fatal(err)
		}
		if err := clusterconfig.Apply(ctx, eng, cfg); err != nil {
			t.Fatal(err)
		}
	}

	s.Batch = batchapi.New(eng, opts.Batch)
	s.Sharq = sharqapi.New(eng, opts.Sharq)
	// The engine's defaults, which sagemakerapi and logsapi do not fill in.
	region, account := cmp.Or(opts.Region, "us-east-1"), cmp.Or(opts.AccountID, "000000000000")
	s.SageMaker = sagemakerapi.New(eng, sagemakerapi.Options{Region: region, AccountID: account, Authorizer: opts.Authorizer})
	s.Logs = logsapi.New(eng, logsapi.Options{Region: region, AccountID: account, Logs: opts.Sharq.Logs, Authorizer: opts.Authorizer})
	mux := http.NewServeMux()
	mux.Handle("/v1/", s.Metrics.API(s.Batch))
	s.Metrics.Watch(eng)
	mux.Handle("GET /metrics", s.Metrics.Handler())
	mux.Handle("POST /{$}", sdkRoot{sagemaker: s.SageMaker, logs: s.Logs})
	s.Sharq.Mount(mux)
	s.Console.Mount(mux, eng, s.Batch)
	var h http.Handler = mux
	if opts.Authenticator != nil {
		h = access.Middleware(mux, opts.Authenticator, s.Batch.WriteError)
	}
	if opts.Wrap != nil {
		h = opts.Wrap(s, h)
	}
	s.HTTP = httptest.NewServer(h)
	s.URL = s.HTTP.URL
	t.Cleanup(func() {
		// Streams and followers end first, so that Close does not wait
		// for them.
		s.Console.Close()
		s.Sharq.Close()
		s.HTTP.Close()
	})
	return s
}

// sdkRoot serves POST /, where AWS's JSON protocol sends every operation:
// SageMaker's and CloudWatch Logs' told apart by X-Amz-Target, as serve's
// root does (IAM's calls, which only read fixed answers, are not served).
type sdkRoot struct {
	sagemaker, logs http.Handler
}

func (a sdkRoot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch prefix, _ := awsjson.Target(r); prefix {
	case sagemakerapi.TargetPrefix:
		a.sagemaker.ServeHTTP(w, r)
	case logsapi.TargetPrefix:
		a.logs.ServeHTTP(w, r)
	default:
		awsjson.WriteError(w, nil, awsjson.UnknownOperation(r.Header.Get("X-Amz-Target")))
	}
}

// SageMakerClient is the AWS SDK for Go v2 SageMaker client pointed at the
// server, as BatchClient is.
func (s *Server) SageMakerClient() *sagemaker.Client {
	return sagemaker.New(sagemaker.Options{
		Region:       s.region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   s.HTTP.Client(),
	})
}

// BatchClient is the AWS SDK for Go v2 Batch client pointed at the server,
// with static credentials and no retries (a retried 500 would hide the
// first).
func (s *Server) BatchClient() *batch.Client {
	return batch.New(batch.Options{
		Region:       s.region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   s.HTTP.Client(),
	})
}

// Response is an answer read in full.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends a raw JSON request, for what a client would refuse to send.
func (s *Server) Do(t testing.TB, method, path, body string) Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{resp.StatusCode, resp.Header, string(b)}
}

// Submit submits, through the engine, a job of one ml.g5.xlarge that runs
// until it is stopped, and returns its ID.
func (s *Server) Submit(t testing.TB, queue, name, share string, prio int) string {
	t.Helper()
	j, err := s.Engine.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: share, SchedulingPriority: &prio,
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`})
	if err != nil {
		t.Fatal(err)
	}
	return j.JobID
}

// WaitStatus waits until the engine has the job in one of the statuses,
// and returns it as the engine then describes it.
func (s *Server) WaitStatus(t testing.TB, id string, statuses ...string) record.Job {
	t.Helper()
	var j record.Job
	testwait.Until(t, 15*time.Second, func() error {
		var err error
		if j, err = s.Engine.DescribeServiceJob(context.Background(), id); err != nil {
			return err
		}
		if !slices.Contains(statuses, j.Status) {
			return fmt.Errorf("job %s is %s (%s), want %v", j.JobName, j.Status, j.StatusReason, statuses)
		}
		return nil
	})
	return j
}
