package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/metrics"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/web"
)

// server is a real sharq server as serve wires it: the engine over SQLite
// in a temp dir with the simulated executor, the AWS Batch API, metrics
// and the console, behind the middleware (which authenticates every
// request as tester), on a loopback port.
type server struct {
	t   *testing.T
	eng *engine.Engine
	api *batchapi.Handler
	url string
}

// tester is the caller the server's authenticator vouches for.
var tester = access.Identity{AccessKeyID: "AKIDTESTER", Principal: "arn:aws:iam::000000000000:user/tester"}

const (
	queue  = "my-sm-training-qm-jq"
	region = "us-east-1"
	acct   = "000000000000"
)

func start(t *testing.T) *server {
	t.Helper()
	return startWith(t, web.Options{})
}

func startWith(t *testing.T, opts web.Options) *server {
	t.Helper()
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return tester, nil })
	return startAuth(t, opts, authn)
}

// startAuth is startWith behind authn instead of the tester's.
func startAuth(t *testing.T, opts web.Options, authn access.Authenticator) *server {
	t.Helper()
	return startExecutor(t, opts, authn, nil)
}

// startExecutor is startAuth with the simulated executor seen through wrap
// when it is not nil.
func startExecutor(t *testing.T, opts web.Options, authn access.Authenticator, wrap func(executor.Executor) executor.Executor) *server {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ex := simulated.New()
	var run executor.Executor = ex
	if wrap != nil {
		run = wrap(ex)
	}
	met := metrics.New()
	console := web.New(opts)
	eng, err := engine.New(context.Background(), engine.Options{Store: st, Executor: run,
		Observers: []engine.Observer{met, console}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()

	mux := http.NewServeMux()
	api := batchapi.New(eng, batchapi.Options{Region: region, AccountID: acct, Authorizer: opts.Authorizer})
	mux.Handle("/v1/", met.API(api))
	met.Watch(eng)
	mux.Handle("GET /metrics", met.Handler())
	sharqapi.New(eng, sharqapi.Options{Region: region, AccountID: acct, Authorizer: opts.Authorizer}).Mount(mux)
	console.Mount(mux, eng, api)
	srv := httptest.NewServer(access.Middleware(mux, authn, api.WriteError))
	t.Cleanup(func() {
		console.Close() // streams end, so Close does not wait for them
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
		ex.Close()
		st.Close()
	})
	return &server{t: t, eng: eng, api: api, url: srv.URL}
}

func ptr[T any](v T) *T { return &v }

// setupWalkthrough creates the walkthrough's policy, environment, queue
// and shares.
func (s *server) setupWalkthrough() {
	s.t.Helper()
	ctx := context.Background()
	must := func(err error) {
		s.t.Helper()
		if err != nil {
			s.t.Fatal(err)
		}
	}
	p, err := s.eng.CreateSchedulingPolicy(ctx, engine.CreateSchedulingPolicyInput{Name: "my-qm-scheduling-policy",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	must(err)
	_, err = s.eng.CreateServiceEnvironment(ctx, engine.CreateServiceEnvironmentInput{Name: "my-sm-training-qm-se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 3}}})
	must(err)
	_, err = s.eng.CreateJobQueue(ctx, engine.CreateJobQueueInput{Name: queue, Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "my-sm-training-qm-se"}}, SchedulingPolicyArn: p.Arn})
	must(err)
	for _, sh := range []struct {
		name, strategy, inShare string
		borrow                  *int
	}{{"QS1", "LEND_AND_BORROW", "ENABLED", ptr(200)}, {"QS2", "LEND", "DISABLED", nil}, {"QS3", "RESERVE", "DISABLED", nil}} {
		_, err = s.eng.CreateQuotaShare(ctx, engine.CreateQuotaShareInput{Name: sh.name, JobQueue: queue,
			CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: sh.strategy, BorrowLimit: sh.borrow},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: sh.inShare}})
		must(err)
	}
}

// submit submits a job that runs until it is stopped.
func (s *server) submit(name, share string, prio int) string {
	s.t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"ResourceConfig": map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": 1},
	})
	j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: string(payload), QuotaShareName: share, SchedulingPriority: &prio})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.JobID
}

var dispatched = []string{"SCHEDULED", "STARTING", "RUNNING"}

// wait polls until the job has one of the statuses.
func (s *server) wait(id string, statuses ...string) record.Job {
	s.t.Helper()
	var j record.Job
	testwait.Until(s.t, 15*time.Second, func() error {
		var err error
		if j, err = s.eng.DescribeServiceJob(context.Background(), id); err != nil {
			s.t.Fatal(err)
		}
		if !slices.Contains(statuses, j.Status) {
			return fmt.Errorf("job %s is %s (%s), want %v", j.JobName, j.Status, j.StatusReason, statuses)
		}
		return nil
	})
	return j
}

// walkthrough holds the walkthrough's job IDs.
type walkthrough struct {
	high, med, low, qs2 string
}

// step1 submits QS1's three jobs: high runs on QS1's instance, med borrows
// QS2's, low waits.
func (s *server) step1() walkthrough {
	s.t.Helper()
	w := walkthrough{high: s.submit("qs1_job_high", "QS1", 3), med: s.submit("qs1_job_med", "QS1", 2), low: s.submit("qs1_job_low", "QS1", 1)}
	s.wait(w.high, "RUNNING")
	s.wait(w.med, "RUNNING")
	s.wait(w.low, "RUNNABLE")
	return w
}

// step2 submits qs2_job_1, which takes QS2's instance back from med.
func (s *server) step2(w *walkthrough) {
	s.t.Helper()
	w.qs2 = s.submit("qs2_job_1", "QS2", 1)
	s.wait(w.qs2, "RUNNING")
	s.wait(w.med, "RUNNABLE")
}

// step3wait waits for what raising low's priority to 4 does: low preempts high
// inside QS1.
func (s *server) step3wait(w walkthrough) {
	s.t.Helper()
	s.wait(w.low, "RUNNING")
	if j := s.wait(w.high, "RUNNABLE"); j.PreemptionSummary == nil || j.PreemptionSummary.PreemptedAttemptCount != 1 {
		s.t.Fatalf("high's preemption summary: %+v", j.PreemptionSummary)
	}
}

// serveMux serves mux on a loopback port for the test's lifetime.
func serveMux(t *testing.T, mux *http.ServeMux) string {
	t.Helper()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}
