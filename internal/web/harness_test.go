package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/web"
)

// server is a real sharq server as serve wires it: the engine over SQLite
// in a temp dir with the simulated executor, the AWS Batch API, metrics
// and the console, behind the middleware (which authenticates every
// request as tester), on a loopback port.
type server struct {
	t   *testing.T
	srv *testserver.Server
	eng *engine.Engine
	api *batchapi.Handler
	url string
}

// tester is the caller the server's authenticator vouches for.
var tester = testserver.Tester

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
	return startAuth(t, opts, testserver.AsTester())
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
	srv := testserver.Start(t, testserver.Options{Region: region, AccountID: acct, Web: opts, Authorizer: opts.Authorizer,
		Authenticator: authn, WrapExecutor: wrap})
	return &server{t: t, srv: srv, eng: srv.Engine, api: srv.Batch, url: srv.URL}
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
	p, err := s.eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "my-qm-scheduling-policy",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	must(err)
	_, err = s.eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "my-sm-training-qm-se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 3}}})
	must(err)
	_, err = s.eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: queue, Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "my-sm-training-qm-se"}}, SchedulingPolicyArn: p.Arn})
	must(err)
	for _, sh := range []struct {
		name, strategy, inShare string
		borrow                  *int
	}{{"QS1", "LEND_AND_BORROW", "ENABLED", ptr(200)}, {"QS2", "LEND", "DISABLED", nil}, {"QS3", "RESERVE", "DISABLED", nil}} {
		_, err = s.eng.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{Name: sh.name, JobQueue: queue,
			CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}},
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: sh.strategy, BorrowLimit: sh.borrow},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: sh.inShare}})
		must(err)
	}
}

// submit submits a job that runs until it is stopped.
func (s *server) submit(name, share string, prio int) string {
	s.t.Helper()
	return s.srv.Submit(s.t, queue, name, share, prio)
}

var dispatched = []string{"SCHEDULED", "STARTING", "RUNNING"}

// wait waits until the job has one of the statuses.
func (s *server) wait(id string, statuses ...string) record.Job {
	s.t.Helper()
	return s.srv.WaitStatus(s.t, id, statuses...)
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
