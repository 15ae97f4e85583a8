package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// tester is the caller the test's authenticator vouches for.
var tester = access.Identity{AccessKeyID: "AKIDTESTER", Principal: "arn:aws:iam::000000000000:user/tester"}

var base = arn.NewBase("us-east-1", "000000000000")

// gate is the test's authenticator and authorizer: it counts
// authentications, records what it is asked, and refuses what it is told
// to.
type gate struct {
	mu         sync.Mutex
	authns     int
	failAuthn  bool
	deny       bool
	authorized []string // "action resource"
	principals []string
}

func (g *gate) Authenticate(*http.Request) (access.Identity, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.authns++
	if g.failAuthn {
		return access.Identity{}, &access.AuthError{Status: 403, Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}
	}
	return tester, nil
}

func (g *gate) Authorize(_ context.Context, id access.Identity, action, resource string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.authorized = append(g.authorized, action+" "+resource)
	g.principals = append(g.principals, id.Principal)
	if g.deny {
		return access.Deny(id, action, resource)
	}
	return nil
}

// take returns and forgets the authentications and authorizations so far.
func (g *gate) take() (authns int, authorized, principals []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	authns, authorized, principals = g.authns, g.authorized, g.principals
	g.authns, g.authorized, g.principals = 0, nil, nil
	return authns, authorized, principals
}

func (g *gate) set(deny, failAuthn bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deny, g.failAuthn = deny, failAuthn
}

// testServer is newServer over SQLite in a temp dir with the simulated
// executor, on a loopback port, with g as authenticator and authorizer.
func testServer(t *testing.T, g *gate) (*server, string) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ex := simulated.New()
	// Keys for the key routes' steps to change.
	for _, k := range []access.StoredKey{{ID: "SKIAFLIP", Name: "flip"}, {ID: "SKIADEL1", Name: "del1"}, {ID: "SKIADEL2", Name: "del2"}} {
		k.SealedSecret = []byte{0}
		if err := st.Keys().CreateKey(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	cfg := serveConfig{region: "us-east-1", accountID: "000000000000", maxShares: 20, retention: time.Hour, grace: time.Second}
	s, err := newServer(t.Context(), cfg, st, st.Keys(), ex, slog.New(slog.NewTextHandler(t.Output(), nil)),
		accessGate{authn: g, authz: g, keyring: testKeyring(t, st.Keys())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.eng.Run(ctx) }()
	srv := httptest.NewServer(s.handler)
	t.Cleanup(func() {
		for _, c := range s.closers {
			c()
		}
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
		ex.Close()
		st.Close()
	})
	return s, srv.URL
}

const jobPayload = `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`

// setup makes, through the engine, the queue jq with share QS1 on the
// environment se (four ml.g5.xlarge), the running jobs a to d, and for
// each pass n (1, 2) a disabled share, queue and environment and a policy
// for that pass to delete, an environment for the queue it creates, and a
// tag "keep<n>" on QS1.
func setup(t *testing.T, eng *engine.Engine) (jobs []string) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fifo := &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}
	limits := func(n int) []record.CapacityLimit {
		return []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: n}}
	}
	must(eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "qm", QuotaSharePolicy: fifo}))
	must(eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "se", Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(4)}))
	must(eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "jq", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "se"}}, SchedulingPolicyArn: base.SchedulingPolicy("qm")}))
	share := func(name, strategy, state string) batchmodel.CreateQuotaShareInput {
		return batchmodel.CreateQuotaShareInput{Name: name, JobQueue: "jq", CapacityLimits: limits(4), State: state,
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: strategy},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}}
	}
	must(eng.CreateQuotaShare(ctx, share("QS1", "RESERVE", "")))
	for _, n := range []string{"1", "2"} {
		must(eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "old" + n, QuotaSharePolicy: fifo}))
		must(eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "old" + n, Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(1), State: "DISABLED"}))
		for _, env := range []string{"queue-old" + n, "queue-new" + n} { // an environment serves one queue
			must(eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: env, Type: "SAGEMAKER_TRAINING", CapacityLimits: limits(1)}))
		}
		must(eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: "old" + n, Priority: 1, Type: "SAGEMAKER_TRAINING", State: "DISABLED",
			ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "queue-old" + n}}}))
		must(eng.CreateQuotaShare(ctx, share("old"+n, "LEND", "DISABLED")))
		must(nil, eng.TagResource(ctx, base.QuotaShare("jq", "QS1"), map[string]string{"keep" + n: "yes"}))
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		prio := 1
		j, err := eng.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: name, JobQueue: "jq", ServiceJobType: "SAGEMAKER_TRAINING",
			QuotaShareName: "QS1", SchedulingPriority: &prio, ServiceRequestPayload: jobPayload})
		must(j, err)
		jobs = append(jobs, j.JobID)
	}
	for _, id := range jobs {
		waitStatus(t, eng, id, "RUNNING")
	}
	return jobs
}

func waitStatus(t *testing.T, eng *engine.Engine, id, status string) {
	t.Helper()
	testwait.Until(t, 15*time.Second, func() error {
		j, err := eng.DescribeServiceJob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != status {
			return fmt.Errorf("job %s is %s (%s), want %s", j.JobName, j.Status, j.StatusReason, status)
		}
		return nil
	})
}

// step is a good request to one route and what it must be authorized on
// (no action: a route that holds no data).
type step struct {
	route              string // the mux pattern, or the API operation's "METHOD PATH"
	method, path, body string
	action, resource   string
}

// steps are a request to every route. Pass n (1, 2) creates and deletes
// resources of its own; ended, changed and terminated are the jobs it
// terminates through the API, through TerminateServiceJobs and from the
// console, and changes otherwise.
func steps(n string, ended, endedMany, endedConsole, changed string) []step {
	jq, qs1 := base.JobQueue("jq"), base.QuotaShare("jq", "QS1")
	job := base.ServiceJob(changed)
	tags := "/v1/tags/" + url.PathEscape(qs1)
	payload := strconv.Quote(jobPayload)
	api := func(op, body, action, resource string) step {
		path := "/v1/" + strings.ToLower(op)
		return step{"POST " + path, "POST", path, body, "batch:" + action, resource}
	}
	return []step{
		{"GET /healthz", "GET", "/healthz", "", "", ""},
		{"GET /readyz", "GET", "/readyz", "", "", ""},
		{"GET /{$}", "GET", "/", "", "", ""},
		{"GET /jobs/{job}", "GET", "/jobs/" + changed, "", "", ""},
		{"GET /usage", "GET", "/usage?since=7d", "", "", ""},
		{"GET /assets/", "GET", "/assets/app.js", "", "", ""},
		{"/sharq/v1/", "GET", "/sharq/v1/nothing", "", "", ""},
		{"GET /sharq/v1/whoami", "GET", "/sharq/v1/whoami", "", "sharq:GetCallerIdentity", "*"},
		{"GET /sharq/v1/usage", "GET", "/sharq/v1/usage?since=1d&by=owner", "", "sharq:GetUsage", "*"},
		{"GET /metrics", "GET", "/metrics", "", "sharq:GetMetrics", "*"},
		// send names the operation: X-Amz-Target SageMaker.ListTrainingJobs.
		{"POST /{$}", "POST", "/", "{}", "sagemaker:ListTrainingJobs", "*"},

		api("CreateSchedulingPolicy", `{"name":"new`+n+`","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`, "CreateSchedulingPolicy", base.SchedulingPolicy("new"+n)),
		api("UpdateSchedulingPolicy", `{"arn":"`+base.SchedulingPolicy("qm")+`","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`, "UpdateSchedulingPolicy", base.SchedulingPolicy("qm")),
		api("DescribeSchedulingPolicies", `{"arns":["`+base.SchedulingPolicy("qm")+`"]}`, "DescribeSchedulingPolicies", "*"),
		api("ListSchedulingPolicies", `{}`, "ListSchedulingPolicies", "*"),
		api("DeleteSchedulingPolicy", `{"arn":"`+base.SchedulingPolicy("old"+n)+`"}`, "DeleteSchedulingPolicy", base.SchedulingPolicy("old"+n)),
		api("CreateServiceEnvironment", `{"serviceEnvironmentName":"new`+n+`","serviceEnvironmentType":"SAGEMAKER_TRAINING","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}]}`,
			"CreateServiceEnvironment", base.ServiceEnvironment("new"+n)),
		api("UpdateServiceEnvironment", `{"serviceEnvironment":"se","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":`+map[string]string{"1": "5", "2": "6"}[n]+`}]}`,
			"UpdateServiceEnvironment", base.ServiceEnvironment("se")),
		api("DescribeServiceEnvironments", `{}`, "DescribeServiceEnvironments", "*"),
		api("CreateJobQueue", `{"jobQueueName":"new`+n+`","jobQueueType":"SAGEMAKER_TRAINING","priority":1,"state":"DISABLED","serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"queue-new`+n+`"}]}`, "CreateJobQueue", base.JobQueue("new"+n)),
		api("UpdateJobQueue", `{"jobQueue":"jq","priority":`+n+`0}`, "UpdateJobQueue", jq),
		api("DescribeJobQueues", `{}`, "DescribeJobQueues", "*"),
		api("GetJobQueueSnapshot", `{"jobQueue":"jq"}`, "GetJobQueueSnapshot", jq),
		api("CreateQuotaShare", `{"quotaShareName":"new`+n+`","jobQueue":"jq","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],`+
			`"resourceSharingConfiguration":{"strategy":"RESERVE"},"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`, "CreateQuotaShare", base.QuotaShare("jq", "new"+n)),
		api("UpdateQuotaShare", `{"quotaShareArn":"`+qs1+`","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":`+map[string]string{"1": "5", "2": "6"}[n]+`}]}`, "UpdateQuotaShare", qs1),
		api("DescribeQuotaShare", `{"quotaShareArn":"`+qs1+`"}`, "DescribeQuotaShare", qs1),
		api("ListQuotaShares", `{"jobQueue":"`+jq+`"}`, "ListQuotaShares", jq),
		api("DeleteQuotaShare", `{"quotaShareArn":"`+base.QuotaShare("jq", "old"+n)+`"}`, "DeleteQuotaShare", base.QuotaShare("jq", "old"+n)),
		api("DeleteJobQueue", `{"jobQueue":"old`+n+`"}`, "DeleteJobQueue", base.JobQueue("old"+n)),
		api("DeleteServiceEnvironment", `{"serviceEnvironment":"old`+n+`"}`, "DeleteServiceEnvironment", base.ServiceEnvironment("old"+n)),
		api("SubmitServiceJob", `{"jobName":"new`+n+`","jobQueue":"jq","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":`+payload+`}`, "SubmitServiceJob", qs1),
		api("DescribeServiceJob", `{"jobId":"`+changed+`"}`, "DescribeServiceJob", job),
		api("ListServiceJobs", `{"jobQueue":"jq"}`, "ListServiceJobs", jq),
		api("UpdateServiceJob", `{"jobId":"`+job+`","schedulingPriority":`+n+`1}`, "UpdateServiceJob", job),
		api("TerminateServiceJob", `{"jobId":"`+ended+`","reason":"test"}`, "TerminateServiceJob", base.ServiceJob(ended)),
		api("TerminateServiceJobs", `{"jobs":["`+endedMany+`"],"reason":"test"}`, "TerminateServiceJob", base.ServiceJob(endedMany)),
		{"POST /v1/tags/{resourceArn}", "POST", tags, `{"tags":{"new` + n + `":"yes"}}`, "batch:TagResource", qs1},
		{"GET /v1/tags/{resourceArn}", "GET", tags, "", "batch:ListTagsForResource", qs1},
		{"DELETE /v1/tags/{resourceArn}", "DELETE", tags + "?tagKeys=keep" + n, "", "batch:UntagResource", qs1},

		{"GET /sharq/v1/shares", "GET", "/sharq/v1/shares", "", "sharq:GetShareUsage", "*"},
		{"POST /sharq/v1/jobs/positions", "POST", "/sharq/v1/jobs/positions", `{"jobIds":["` + changed + `"]}`, "sharq:GetJobPositions", "*"},
		{"GET /sharq/v1/jobs/match", "GET", "/sharq/v1/jobs/match?id=" + changed[len(changed)-8:], "", "sharq:GetJobMatches", "*"},
		{"GET /sharq/v1/estimates", "GET", "/sharq/v1/estimates", "", "sharq:GetStartEstimates", "*"},
		{"GET /sharq/v1/jobs/{job}/events", "GET", "/sharq/v1/jobs/" + changed + "/events", "", "sharq:GetJobEvents", job},
		{"GET /sharq/v1/jobs/{job}/logs", "GET", "/sharq/v1/jobs/" + changed + "/logs", "", "sharq:GetLogs", job},
		{"GET /sharq/v1/events", "GET", "/sharq/v1/events?job=" + changed, "", "sharq:GetEvents", job},
		{"POST /sharq/v1/dryrun", "POST", "/sharq/v1/dryrun", `{"jobName":"j","jobQueue":"jq","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":` + payload + `}`, "sharq:DryRunSubmitServiceJob", qs1},
		{"GET /sharq/v1/stream", "GET", "/sharq/v1/stream", "", "sharq:GetConsoleState", "*"},
		{"GET /sharq/v1/console/state", "GET", "/sharq/v1/console/state", "", "sharq:GetConsoleState", "*"},
		{"GET /sharq/v1/console/jobs/{job}", "GET", "/sharq/v1/console/jobs/" + changed, "", "sharq:GetJobDetail", job},
		{"POST /sharq/v1/jobs/{job}/priority", "POST", "/sharq/v1/jobs/" + changed + "/priority", `{"schedulingPriority":` + n + `2}`, "batch:UpdateServiceJob", job},
		{"POST /sharq/v1/jobs/{job}/terminate", "POST", "/sharq/v1/jobs/" + endedConsole + "/terminate", `{}`, "batch:TerminateServiceJob", base.ServiceJob(endedConsole)},
		{"GET /sharq/v1/access/policies", "GET", "/sharq/v1/access/policies", "", "sharq:ListAccessPolicies", "*"},
		{"GET /sharq/v1/audit", "GET", "/sharq/v1/audit", "", "sharq:ReadAuditLog", "*"},
		{"GET /sharq/v1/access/keys", "GET", "/sharq/v1/access/keys", "", "sharq:ListAccessKeys", "*"},
		{"POST /sharq/v1/access/keys", "POST", "/sharq/v1/access/keys", `{"name":"new` + n + `","policies":["ReadOnlyAccess"]}`,
			"sharq:CreateAccessKey", "arn:aws:iam::000000000000:user/new" + n},
		{"POST /sharq/v1/access/keys/{id}/disable", "POST", "/sharq/v1/access/keys/SKIAFLIP/disable", "", "sharq:UpdateAccessKey", "arn:aws:iam::000000000000:user/flip"},
		{"POST /sharq/v1/access/keys/{id}/enable", "POST", "/sharq/v1/access/keys/SKIAFLIP/enable", "", "sharq:UpdateAccessKey", "arn:aws:iam::000000000000:user/flip"},
		{"DELETE /sharq/v1/access/keys/{id}", "DELETE", "/sharq/v1/access/keys/SKIADEL" + n, "", "sharq:DeleteAccessKey", "arn:aws:iam::000000000000:user/del" + n},
		{"PUT /sharq/v1/access/policies/{name}", "PUT", "/sharq/v1/access/policies/team-" + n,
			`{"Statement":[{"Effect":"Allow","Action":["batch:SubmitServiceJob"],"Resource":["` + qs1 + `"]}]}`,
			"sharq:PutAccessPolicy", "arn:aws:iam::000000000000:policy/team-" + n},
		{"PUT /sharq/v1/queues/{queue}/shares/{share}/settings", "PUT", "/sharq/v1/queues/jq/shares/QS1/settings",
			`{"minimumRuntimeSeconds":60}`, "sharq:UpdateQuotaShareSettings", qs1},
	}
}

// send makes the step's request and returns the status and body; the
// stream is read only up to its headers.
func send(t *testing.T, srvURL string, st step) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, st.method, srvURL+st.path, strings.NewReader(st.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if st.route == "POST /{$}" {
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "SageMaker.ListTrainingJobs")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if st.route == "GET /sharq/v1/stream" && resp.StatusCode == 200 {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// routeKeys lists every route of the server: the mux's patterns, with the
// AWS API's one pattern expanded into its operations.
func routeKeys(s *server) []string {
	var keys []string
	for _, p := range s.mux.patterns {
		if p != "/v1/" {
			keys = append(keys, p)
			continue
		}
		for _, r := range batchapi.Routes() {
			keys = append(keys, r.Method+" "+r.Path)
		}
	}
	slices.Sort(keys)
	return keys
}

// Ensure every route of the server is authenticated once per request and
// asks the authorizer once with the authenticated caller, its action and
// its resource; that a refused request answers 403 in AWS's words and
// changes nothing; and that a request authentication refuses goes
// nowhere.
func TestEveryRouteAuthenticatesAndAuthorizes(t *testing.T) {
	g := &gate{}
	s, srvURL := testServer(t, g)
	jobs := setup(t, s.eng)
	allowed := steps("1", jobs[0], jobs[1], jobs[2], jobs[3])
	var covered []string
	for _, st := range allowed {
		covered = append(covered, st.route)
	}
	slices.Sort(covered)
	if diff := cmp.Diff(routeKeys(s), covered); diff != "" {
		t.Fatalf("routes (-server +steps here): add a step for each new route\n%s", diff)
	}

	g.take()
	for _, st := range allowed {
		status, body := send(t, srvURL, st)
		if status >= 300 && !(st.route == "/sharq/v1/" && status == 404) && !(st.route == "GET /sharq/v1/jobs/{job}/logs" && status == 501) {
			t.Errorf("%s: %d %s", st.route, status, body)
		}
		var want []string
		if st.action != "" {
			want = []string{st.action + " " + st.resource}
		}
		authns, got, principals := g.take()
		if authns != 1 || !slices.Equal(got, want) || slices.ContainsFunc(principals, func(p string) bool { return p != tester.Principal }) {
			t.Errorf("%s: %d authentications, authorizer asked %v by %v, want once %v", st.route, authns, got, principals, want)
		}
	}
	for _, id := range jobs[:3] {
		waitStatus(t, s.eng, id, "FAILED") // terminated
	}

	// Refused: the same routes, each job route on d, which runs.
	g.set(true, false)
	before := fingerprint(t, s.eng)
	for _, st := range steps("2", jobs[3], jobs[3], jobs[3], jobs[3]) {
		status, body := send(t, srvURL, st)
		authns, got, _ := g.take()
		if authns != 1 {
			t.Errorf("%s: %d authentications", st.route, authns)
		}
		if st.action == "" {
			if len(got) != 0 {
				t.Errorf("%s: authorizer asked %v", st.route, got)
			}
			continue
		}
		msg := "User: " + tester.Principal + " is not authorized to perform: " + st.action + " on resource: " + st.resource
		wantStatus := 403
		if st.route == "POST /v1/terminateservicejobs" {
			wantStatus = 200 // as AWS: the job's refusal is in errors
		}
		if status != wantStatus || !strings.Contains(body, msg) {
			t.Errorf("%s refused: %d %s, want %d with %q", st.route, status, body, wantStatus, msg)
		}
	}
	// The engine answers a write once it is committed, so what was let
	// through would show already.
	if diff := cmp.Diff(before, fingerprint(t, s.eng)); diff != "" {
		t.Errorf("refused requests changed the server (-before +after):\n%s", diff)
	}
	waitStatus(t, s.eng, jobs[3], "RUNNING")

	// Not authenticated: every route answers AWS's error and asks nothing.
	g.set(false, true)
	for _, st := range steps("2", jobs[3], jobs[3], jobs[3], jobs[3]) {
		status, body := send(t, srvURL, st)
		if _, got, _ := g.take(); status != 403 || len(got) != 0 ||
			body != `{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}` {
			t.Errorf("%s unauthenticated: %d %s, authorizer asked %v", st.route, status, body, got)
		}
	}
}

// fingerprint is what the server holds: resources, tags, jobs with their
// status and priority.
func fingerprint(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	ctx := context.Background()
	type jobState struct {
		ID, Status string
		Priority   int
		Terminated bool
	}
	var out struct {
		Policies []record.SchedulingPolicy
		Envs     []record.ServiceEnvironment
		Queues   []record.JobQueue
		Shares   []record.QuotaShare
		Tags     map[string]string
		Jobs     []jobState
	}
	var err error
	fatal := func(e error) {
		t.Helper()
		if e != nil {
			t.Fatal(e)
		}
	}
	policies, _, err := eng.ListSchedulingPolicies(ctx, batchmodel.Page{MaxResults: 100})
	fatal(err)
	for _, p := range policies {
		ps, err := eng.DescribeSchedulingPolicies(ctx, []string{p.Arn})
		fatal(err)
		out.Policies = append(out.Policies, ps...)
	}
	out.Envs, _, err = eng.DescribeServiceEnvironments(ctx, nil, batchmodel.Page{MaxResults: 100})
	fatal(err)
	out.Queues, _, err = eng.DescribeJobQueues(ctx, nil, batchmodel.Page{MaxResults: 100})
	fatal(err)
	out.Shares, _, err = eng.ListQuotaShares(ctx, "jq", batchmodel.Page{MaxResults: 100})
	fatal(err)
	out.Tags, err = eng.ListTagsForResource(ctx, base.QuotaShare("jq", "QS1"))
	fatal(err)
	jobs, _, err := eng.ListServiceJobs(ctx, engine.ListServiceJobsInput{JobQueue: "jq", Page: batchmodel.Page{MaxResults: 100}})
	fatal(err)
	for _, j := range jobs {
		d, err := eng.DescribeServiceJob(ctx, j.JobID)
		fatal(err)
		out.Jobs = append(out.Jobs, jobState{d.JobID, d.Status, d.SchedulingPriority, d.IsTerminated})
	}
	b, err := json.MarshalIndent(out, "", " ")
	fatal(err)
	return string(b)
}

func testKeyring(t *testing.T, keys access.KeyStore) *access.Keyring {
	t.Helper()
	ring, err := access.NewKeyring(keys, make([]byte, access.ServerKeySize), "000000000000")
	if err != nil {
		t.Fatal(err)
	}
	return ring
}
