package batchapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
	"github.com/sharq-dev/sharq/internal/store"
)

// FuzzAPI sends arbitrary requests to every operation of the handler in
// front of a real engine holding a small configuration and a few jobs. The
// input is the engine's state (one of fixtureVariants), the operation (its
// AWS name, optionally after a method, e.g. "GET CreateJobQueue"; any other
// text is a path under /v1/), the tag operations' resource (the rest of the
// path after /v1/tags/, query included) and the body.
//
// Every answer must be a 2xx or a well-formed ClientException: a panic in
// an operation, which the handler turns into a ServerException, fails. A
// refused request, and any read, must leave the engine's observable state
// as it was, and tell the executor nothing. A write that succeeds may
// change the state; an engine restarted over the store must then hold the
// same. The next input starts from a freshly built engine, so every input
// runs against the state it names and a failure reproduces from its input
// alone.
func FuzzAPI(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.variant, s.op, s.resource, []byte(s.body))
	}
	fixtures := make([]*apiFixture, len(fixtureVariants))
	f.Fuzz(func(t *testing.T, variant uint8, op, resource string, body []byte) {
		req, ok := fuzzRequest(op, resource, body)
		if !ok {
			return // net/http would refuse the request before the handler
		}
		routed, routeErr := route(req)
		v := int(variant) % len(fixtureVariants)
		if fixtures[v] == nil {
			fixtures[v] = newAPIFixture(t, v)
		}
		fx := fixtures[v]
		fx.ready(t)
		fx.logs.Reset()
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		out := checkWireResponse(t, rec, routeErr, fx.logs)
		if len(fx.ex.bad) > 0 {
			t.Fatalf("%s %s: the executor was told:\n%s", req.Method, req.RequestURI, strings.Join(fx.ex.bad, "\n"))
		}

		after := fx.fingerprint(t)
		if after == fx.state {
			return
		}
		switch {
		case routeErr != nil || out.status != http.StatusOK:
			t.Fatalf("%s %s refused with %d %s, yet the state changed (-before +after):\n%s",
				req.Method, req.RequestURI, out.status, out.body, cmp.Diff(fx.state, after))
		case readOnly(routed.name):
			t.Fatalf("%s %s only reads, yet the state changed (-before +after):\n%s",
				req.Method, req.RequestURI, cmp.Diff(fx.state, after))
		case routed.name == "TerminateServiceJobs" && !terminatedAny(out.body):
			t.Fatalf("TerminateServiceJobs terminated no job (%s), yet the state changed (-before +after):\n%s",
				out.body, cmp.Diff(fx.state, after))
		}
		fx.dirty = true
		fx.checkRestart(t)
	})
}

// checkRestart checks that an engine started over the store, once it has
// run the cycle that settles what it loaded, holds what the running
// engine does: an accepted write is durable as applied.
func (fx *apiFixture) checkRestart(t *testing.T) {
	t.Helper()
	// A job preempted by the write is held back until a later instant,
	// which a restart is: compare with the running engine at one too.
	if err := fx.eng.Tick(context.Background()); err != nil {
		t.Fatalf("the running engine's next cycle: %v", err)
	}
	want := engineState(t, fx.eng, fx.st)
	st := memstore.Reopen(fx.st)
	eng, err := engine.New(context.Background(), engine.Options{Region: testRegion, AccountID: testAccount, Store: st,
		Executor: &recordingExecutor{started: map[string]string{}, stopping: fx.ex.stopping}, Driver: &engine.Driver{Clock: fx.clock}})
	if err != nil {
		t.Fatalf("the engine does not restart over what the write left: %v", err)
	}
	if err := eng.Tick(context.Background()); err != nil {
		t.Fatalf("the restarted engine's first cycle: %v", err)
	}
	if got := engineState(t, eng, st); got != want {
		t.Fatalf("after a restart the state differs (-running +restarted):\n%s", cmp.Diff(want, got))
	}
}

// readOnly tells the operations that must never change state.
func readOnly(op string) bool {
	for _, p := range []string{"Describe", "List", "Get"} {
		if strings.HasPrefix(op, p) {
			return true
		}
	}
	return false
}

func terminatedAny(body []byte) bool {
	var out struct{ Successful []string }
	return json.Unmarshal(body, &out) != nil || len(out.Successful) > 0
}

// fuzzRequest builds the request as net/http's server would read it off
// the wire; ok is false when the server would refuse it first.
func fuzzRequest(op, resource string, body []byte) (*http.Request, bool) {
	method, name, hasMethod := strings.Cut(op, " ")
	if !hasMethod {
		method, name = "", op
	}
	var target string
	switch {
	case strings.HasPrefix(name, "/"):
		target = name
	case tagOperationMethod(name) != "":
		target = tagsPrefix + resource
		if method == "" {
			method = tagOperationMethod(name)
		}
	case operationNamed(name):
		target = "/v1/" + strings.ToLower(name)
	default:
		target = "/v1/" + name
	}
	if method == "" {
		method = http.MethodPost
	}
	if strings.ContainsAny(method+target, " \r\n\x00") {
		return nil, false
	}
	raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: sharq\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, target, len(body), body)
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return nil, false
	}
	return req, true
}

func tagOperationMethod(name string) string {
	for method, op := range tagOperations {
		if op.name == name {
			return method
		}
	}
	return ""
}

func operationNamed(name string) bool {
	for _, op := range operations {
		if op.name == name {
			return true
		}
	}
	return false
}

type wireResponse struct {
	status int
	body   []byte
}

// checkWireResponse checks the answer is a 200 with an empty body or a
// JSON object, or a ClientException as AWS sends it.
func checkWireResponse(t *testing.T, rec *httptest.ResponseRecorder, routeErr error, logs *bytes.Buffer) wireResponse {
	t.Helper()
	h := rec.Header()
	body := rec.Body.Bytes()
	out := wireResponse{rec.Code, body}
	if len(h["x-amzn-RequestId"]) != 1 || h["x-amzn-RequestId"][0] == "" {
		t.Errorf("no x-amzn-RequestId in %v", h)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := h.Get("Content-Length"); got != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q for a body of %d bytes", got, len(body))
	}
	switch rec.Code {
	case http.StatusOK:
		if routeErr != nil {
			t.Fatalf("200 for a request the router refuses (%v): %s", routeErr, body)
		}
		if len(body) > 0 && (!json.Valid(body) || body[0] != '{') {
			t.Fatalf("200 with a body that is not a JSON object: %q", body)
		}
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		var e struct {
			Type    *string `json:"__type"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Type == nil || e.Message == nil {
			t.Fatalf("%d with a body that is not an AWS error (%v): %q", rec.Code, err, body)
		}
		if *e.Type != clientException || *e.Message == "" || !equalHeader(h, "X-Amzn-ErrorType", clientException) {
			t.Fatalf("%d: want a ClientException with a message, got %v %s", rec.Code, h["X-Amzn-ErrorType"], body)
		}
		if rec.Code == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
			t.Errorf("405 without Allow")
		}
	default:
		t.Fatalf("status %d %s\nserver log:\n%s", rec.Code, body, logs)
	}
	return out
}

func equalHeader(h http.Header, key, want string) bool {
	return len(h[key]) == 1 && h[key][0] == want
}

// apiFixture is the handler over a driven engine on a memory store,
// a fixed clock and an executor that only records what it is told.
type apiFixture struct {
	variant int
	eng     *engine.Engine
	st      *memstore.Store
	ex      *recordingExecutor
	h       http.Handler
	clock   engine.Clock
	logs    *bytes.Buffer
	state   string // fingerprint as built
	dirty   bool   // state changed since built
}

func newAPIFixture(tb testing.TB, variant int) *apiFixture {
	fx := &apiFixture{variant: variant, logs: &bytes.Buffer{}}
	fx.build(tb)
	return fx
}

// ready rebuilds the fixture when the previous input changed its state.
func (fx *apiFixture) ready(tb testing.TB) {
	if fx.dirty {
		fx.build(tb)
	}
}

// The fixture's names, for seeds.
var (
	fzPolicy    = testBase.SchedulingPolicy("sp")
	fzFairshare = testBase.SchedulingPolicy("fair")
	fzQS1       = testBase.QuotaShare("HQ", "QS1")
	fzQS2       = testBase.QuotaShare("HQ", "QS2")
	fzQS3       = testBase.QuotaShare("HQ", "QS3")
)

// fzJob is the ID of the fixture's n-th job (1-based).
func fzJob(n int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", n) }

func fzPayload(unit string, count int) string {
	return fmt.Sprintf(`{"TrainingJobName":"t","ResourceConfig":{"InstanceType":%q,"InstanceCount":%d,"VolumeSizeInGB":10}}`, unit, count)
}

// build makes the engine: a quota-share queue HQ (policy sp, environment
// se, shares QS1 to QS3) and a FIFO queue FQ (environment fifo-se), a
// spare fair-share policy, a DISABLED environment and queue to delete, and
// jobs in every status: RUNNING, RUNNABLE (one that could run later, two
// that never can), SCHEDULED, SUCCEEDED and FAILED (terminated). Then the
// fixture's variant takes it on.
func (fx *apiFixture) build(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("fixture: %v", err)
		}
	}
	n := 0
	fx.st = memstore.New()
	fx.ex = &recordingExecutor{started: map[string]string{}}
	defer func() { fx.ex.eng = fx.eng }()
	clock := newFixedTime(time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC))
	fx.clock = clock
	eng, err := engine.New(ctx, engine.Options{Region: testRegion, AccountID: testAccount, Store: fx.st, Executor: fx.ex,
		Driver: &engine.Driver{Clock: clock}, NewID: func() string { n++; return fzJob(n) }})
	must(err)
	fx.eng = eng
	fx.h = New(eng, Options{Region: testRegion, AccountID: testAccount,
		Logger: slog.New(slog.NewTextHandler(fx.logs, &slog.HandlerOptions{Level: slog.LevelError}))})

	limits := func(kv ...any) []record.CapacityLimit {
		var out []record.CapacityLimit
		for i := 0; i < len(kv); i += 2 {
			out = append(out, record.CapacityLimit{CapacityUnit: kv[i].(string), MaxCapacity: kv[i+1].(int)})
		}
		return out
	}
	team := func() map[string]string { return map[string]string{"team": "vision"} }
	_, err = eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "sp",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}, Tags: team()})
	must(err)
	_, err = eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "fair",
		FairsharePolicy: json.RawMessage(`{"shareDecaySeconds":3600}`)})
	must(err)
	for _, se := range []batchmodel.CreateServiceEnvironmentInput{
		{Name: "se", Type: sageMakerTraining, CapacityLimits: limits("ml.g5.xlarge", 4, "ml.p4d.24xlarge", 1), Tags: team()},
		{Name: "fifo-se", Type: sageMakerTraining, CapacityLimits: limits("ml.m5.large", 2)},
		{Name: "spare", Type: sageMakerTraining, CapacityLimits: limits("ml.m5.large", 2), State: "DISABLED"},
	} {
		_, err = eng.CreateServiceEnvironment(ctx, se)
		must(err)
	}
	for _, q := range []batchmodel.CreateJobQueueInput{
		{Name: "HQ", Priority: 1, SchedulingPolicyArn: fzPolicy, Tags: team()},
		{Name: "FQ", Priority: 2},
		{Name: "OLD", Priority: 3, State: "DISABLED"},
	} {
		env := "se"
		if q.SchedulingPolicyArn == "" {
			env = "fifo-se"
		}
		q.Type = sageMakerTraining
		q.ServiceEnvironmentOrder = []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: env}}
		_, err = eng.CreateJobQueue(ctx, q)
		must(err)
	}
	borrow := 200
	for _, s := range []batchmodel.CreateQuotaShareInput{
		{Name: "QS1", CapacityLimits: limits("ml.g5.xlarge", 2),
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND_AND_BORROW", BorrowLimit: &borrow},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "ENABLED"}, Tags: team()},
		{Name: "QS2", CapacityLimits: limits("ml.g5.xlarge", 2, "ml.p4d.24xlarge", 1),
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "RESERVE"},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}},
		{Name: "QS3", CapacityLimits: limits("ml.g5.xlarge", 1), State: "DISABLED",
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: "LEND"},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}},
	} {
		s.JobQueue = "HQ"
		_, err = eng.CreateQuotaShare(ctx, s)
		must(err)
	}

	prio := func(p int) *int { return &p }
	submit := func(in engine.SubmitServiceJobInput) {
		tb.Helper()
		in.ServiceJobType = sageMakerTraining
		_, err := eng.SubmitServiceJob(ctx, in)
		must(err)
	}
	deliver := func(job string, s executor.State) {
		tb.Helper()
		must(eng.Deliver(ctx, executor.Update{AttemptID: fx.ex.started[job], JobID: job, State: s, At: clock.Now()}))
	}
	submit(engine.SubmitServiceJobInput{JobName: "train-a", JobQueue: "HQ", QuotaShareName: "QS1", SchedulingPriority: prio(5),
		ServiceRequestPayload: fzPayload("ml.g5.xlarge", 2), ClientToken: "tok-a", Tags: team()})
	deliver(fzJob(1), executor.Running)
	submit(engine.SubmitServiceJobInput{JobName: "train-b", JobQueue: "HQ", QuotaShareName: "QS1", SchedulingPriority: prio(1),
		ServiceRequestPayload:   fzPayload("ml.p4d.24xlarge", 1),
		RetryStrategy:           &record.RetryStrategy{Attempts: 2, EvaluateOnExit: []record.EvaluateOnExit{{Action: "EXIT", OnStatusReason: "*"}}},
		TimeoutConfig:           &record.TimeoutConfig{AttemptDurationSeconds: 3600},
		PreemptionConfiguration: &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: prio(1)}})
	submit(engine.SubmitServiceJobInput{JobName: "train-c", JobQueue: "HQ", QuotaShareName: "QS2",
		ServiceRequestPayload: fzPayload("ml.p4d.24xlarge", 1)})
	submit(engine.SubmitServiceJobInput{JobName: "fifo-d", JobQueue: "FQ", ServiceRequestPayload: fzPayload("ml.m5.large", 1)})
	deliver(fzJob(4), executor.Running)
	deliver(fzJob(4), executor.Succeeded)
	submit(engine.SubmitServiceJobInput{JobName: "fifo-e", JobQueue: "FQ", ServiceRequestPayload: fzPayload("ml.m5.large", 3)})
	submit(engine.SubmitServiceJobInput{JobName: "fifo-f", JobQueue: "FQ", ServiceRequestPayload: fzPayload("ml.m5.large", 1)})
	must(eng.TerminateServiceJob(ctx, fzJob(6), "no longer needed"))
	submit(engine.SubmitServiceJobInput{JobName: "train-g", JobQueue: "HQ", QuotaShareName: "QS1", SchedulingPriority: prio(3),
		ServiceRequestPayload: fzPayload("ml.g5.xlarge", 1), TimeoutConfig: &record.TimeoutConfig{AttemptDurationSeconds: 600}})
	fixtureVariants[fx.variant](tb, eng, deliver)

	fx.state = fx.fingerprint(tb)
	fx.dirty = false
}

// fixtureVariants take the built fixture on to other states, in which
// other requests succeed or are refused.
var fixtureVariants = []func(tb testing.TB, eng *engine.Engine, deliver func(job string, s executor.State)){
	// As built.
	func(testing.TB, *engine.Engine, func(string, executor.State)) {},
	// Queues, a share and an environment DISABLED with jobs in them, so
	// that they may be deleted, or enabled again.
	func(tb testing.TB, eng *engine.Engine, _ func(string, executor.State)) {
		ctx := context.Background()
		for _, q := range []string{"HQ", "FQ"} {
			if _, err := eng.UpdateJobQueue(ctx, batchmodel.UpdateJobQueueInput{JobQueue: q, State: "DISABLED"}); err != nil {
				tb.Fatalf("fixture: %v", err)
			}
		}
		if _, err := eng.UpdateQuotaShare(ctx, batchmodel.UpdateQuotaShareInput{QuotaShareArn: fzQS1, State: "DISABLED"}); err != nil {
			tb.Fatalf("fixture: %v", err)
		}
		if _, err := eng.UpdateServiceEnvironment(ctx, batchmodel.UpdateServiceEnvironmentInput{ServiceEnvironment: "fifo-se", State: "DISABLED"}); err != nil {
			tb.Fatalf("fixture: %v", err)
		}
	},
	// train-g (priority 9) preempted train-a within QS1 and runs; train-a
	// waits again, with a preempted attempt.
	func(tb testing.TB, eng *engine.Engine, deliver func(string, executor.State)) {
		if _, err := eng.UpdateServiceJob(context.Background(), fzJob(7), 9); err != nil {
			tb.Fatalf("fixture: %v", err)
		}
		deliver(fzJob(1), executor.Stopped)
		deliver(fzJob(7), executor.Running)
	},
}

// fixedTime stays at its time to the millisecond, which is all records
// show, but moves on by a nanosecond at each reading, so that each cycle is
// an instant of its own (a job preempted at an instant is held back until
// a later one).
type fixedTime struct {
	t  time.Time
	ns *atomic.Int64
}

func newFixedTime(t time.Time) fixedTime { return fixedTime{t, new(atomic.Int64)} }

func (c fixedTime) Now() time.Time { return c.t.Add(time.Duration(c.ns.Add(1))) }

// recordingExecutor starts nothing; it remembers what it was told, which
// is part of the state a refused request must not change, and checks each
// attempt against its job: the capacity it asks for and its timeout.
type recordingExecutor struct {
	eng     *engine.Engine
	started map[string]string // job ID → attempt ID
	calls   []string
	bad     []string // attempts that do not match their job
	// stopping are the attempts asked to stop, which never report that
	// they have: an executor over the same machines after a restart still
	// sees them (Attempts), as a real one would see processes in their
	// grace period.
	stopping []string
}

func (x *recordingExecutor) Start(ctx context.Context, a executor.Attempt) error {
	x.started[a.JobID] = a.ID
	x.calls = append(x.calls, fmt.Sprintf("start %s %v %s", a.ID, a.Instances, a.Timeout))
	if x.eng == nil { // building the fixture
		return nil
	}
	j, err := x.eng.DescribeServiceJob(ctx, a.JobID)
	if err != nil {
		x.bad = append(x.bad, fmt.Sprintf("attempt %s of job %s: %v", a.ID, a.JobID, err))
		return nil
	}
	var want []executor.Instances
	for _, u := range j.CapacityUsage {
		want = append(want, executor.Instances{Type: u.CapacityUnit, Count: int(u.Quantity)})
	}
	if fmt.Sprint(want) != fmt.Sprint(a.Instances) || len(want) == 0 {
		x.bad = append(x.bad, fmt.Sprintf("attempt %s of job %s asks for %v, the job uses %v", a.ID, a.JobID, a.Instances, j.CapacityUsage))
	}
	wantTimeout := "0s"
	if tc := j.TimeoutConfig; tc != nil && tc.AttemptDurationSeconds > 0 {
		wantTimeout = (time.Duration(tc.AttemptDurationSeconds) * time.Second).String()
		if int64(tc.AttemptDurationSeconds) > math.MaxInt64/int64(time.Second) {
			wantTimeout = "beyond a time.Duration"
		}
	}
	if a.Timeout.String() != wantTimeout {
		x.bad = append(x.bad, fmt.Sprintf("attempt %s of job %s times out after %s, the job's timeout is %s", a.ID, a.JobID, a.Timeout, wantTimeout))
	}
	return nil
}

func (x *recordingExecutor) Stop(_ context.Context, id string, grace time.Duration) error {
	x.calls = append(x.calls, fmt.Sprintf("stop %s %s", id, grace))
	x.stopping = append(x.stopping, id)
	return nil
}

func (x *recordingExecutor) Updates() <-chan executor.Update { return nil }

func (x *recordingExecutor) Attempts(context.Context) ([]executor.Update, error) {
	var out []executor.Update
	for _, id := range x.stopping {
		out = append(out, executor.Update{AttemptID: id, State: executor.Running})
	}
	return out, nil
}
func (x *recordingExecutor) Close() error { return nil }

// fingerprint renders what a client, an operator or a restart can observe:
// every resource as described and listed, each queue's shares and
// snapshot, the core's usage and queue positions, every job as described
// with its events and tags, the job counts, the store's records, and what
// the executor was told. It does not cover state nothing reads (such as
// the clientToken index) except through these.
func (fx *apiFixture) fingerprint(tb testing.TB) string {
	tb.Helper()
	return engineState(tb, fx.eng, fx.st) + fmt.Sprintf("executor: %q\n", fx.ex.calls)
}

// engineState is the engine's and its store's part of the fingerprint.
func engineState(tb testing.TB, e *engine.Engine, st store.Store) string {
	tb.Helper()
	ctx := context.Background()
	var b strings.Builder
	add := func(what string, v any, err error) {
		j, jerr := json.Marshal(v)
		if jerr != nil {
			tb.Fatalf("fingerprint %s: %v", what, jerr)
		}
		fmt.Fprintf(&b, "%s: %s", what, j)
		if err != nil {
			fmt.Fprintf(&b, " (error %v)", err)
		}
		b.WriteByte('\n')
	}
	var arns []string
	policies, next, err := e.ListSchedulingPolicies(ctx, batchmodel.Page{})
	add("policies "+next, policies, err)
	for _, p := range policies {
		arns = append(arns, p.Arn)
	}
	described, err := e.DescribeSchedulingPolicies(ctx, arns)
	add("described policies", described, err)
	envs, next, err := e.DescribeServiceEnvironments(ctx, nil, batchmodel.Page{})
	add("environments "+next, envs, err)
	for _, se := range envs {
		arns = append(arns, se.ServiceEnvironmentArn)
		add("usage of "+se.ServiceEnvironmentName, e.EnvUsage(se.ServiceEnvironmentName), nil)
	}
	add("environment names", e.ServiceEnvironmentNames(), nil)
	queues, next, err := e.DescribeJobQueues(ctx, nil, batchmodel.Page{})
	add("queues "+next, queues, err)
	for _, q := range queues {
		arns = append(arns, q.JobQueueArn)
		shares, next, err := e.ListQuotaShares(ctx, q.JobQueueName, batchmodel.Page{})
		add("shares of "+q.JobQueueName+" "+next, shares, err)
		for _, s := range shares {
			arns = append(arns, s.QuotaShareArn)
			d, err := e.DescribeQuotaShare(ctx, s.QuotaShareArn)
			add("share "+s.QuotaShareArn, d, err)
		}
		snap, err := e.GetJobQueueSnapshot(ctx, q.JobQueueName)
		add("snapshot of "+q.JobQueueName, snap, err)
	}
	add("share states", e.Shares(), nil)
	counts := e.StatusCounts()
	for status, n := range counts {
		if n == 0 {
			delete(counts, status)
		}
	}
	add("job counts", counts, nil)

	// Stored documents are JSON already: written as they are.
	resources, err := st.Resources(ctx)
	add("stored resources", len(resources), err)
	for _, r := range resources {
		fmt.Fprintf(&b, "stored %s %s: %s\n", r.Kind, r.ARN, r.Doc)
	}
	var ids []string
	err = st.Jobs(ctx, func(j store.Job) error {
		ids = append(ids, j.ID)
		fmt.Fprintf(&b, "stored job %s %q %s %q %s %d %d: %s\n", j.ID, j.Name, j.Queue, j.Share, j.Status, j.CreatedAt, j.EndedAt, j.Doc)
		return nil
	})
	add("stored jobs", len(ids), err)
	for _, id := range ids {
		j, err := e.DescribeServiceJob(ctx, id)
		add("job "+id, j, err)
		arns = append(arns, j.JobArn)
		pos, ok := e.JobPosition(id)
		add("position of "+id+" "+strconv.FormatBool(ok), pos, nil)
		events, err := e.JobEvents(id)
		add("events of "+id, events, err)
	}
	for _, arn := range arns {
		tags, err := e.ListTagsForResource(ctx, arn)
		add("tags of "+arn, tags, err)
	}
	return b.String()
}

type fuzzSeed struct {
	variant            uint8
	op, resource, body string
}

// fuzzSeeds are requests to every operation against the fixture, those
// that succeed and those refused by the handler or by the engine, taken
// from the handler's other tests and from the fixture's names.
func fuzzSeeds() []fuzzSeed {
	q := strconv.Quote
	jobs := func(ids ...string) string { return `["` + strings.Join(ids, `","`) + `"]` }
	submit := func(extra string) string {
		return `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":` +
			q(fzPayload("ml.g5.xlarge", 1)) + extra + `}`
	}
	esc := func(arn string) string { return strings.ReplaceAll(strings.ReplaceAll(arn, ":", "%3A"), "/", "%2F") }
	return []fuzzSeed{
		{0, "CreateSchedulingPolicy", "", `{"name":"sp2","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"},"tags":{"k":"v"}}`},
		{0, "CreateSchedulingPolicy", "", `{"name":"fs2","fairsharePolicy":{"shareDecaySeconds":3600,"computeReservation":1,"shareDistribution":[{"shareIdentifier":"A*","weightFactor":0.5}]}}`},
		{0, "CreateSchedulingPolicy", "", `{"name":"sp"}`},
		{0, "CreateSchedulingPolicy", "", `{"name":"my policy"}`},
		{0, "CreateSchedulingPolicy", "", `{"name":"x","quotaSharePolicy":{},"fairsharePolicy":{}}`},
		{0, "CreateSchedulingPolicy", "", `{"name":"sp","tags":{"a":1}}`},
		{0, "UpdateSchedulingPolicy", "", `{"arn":` + q(fzPolicy) + `,"quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`},
		{0, "UpdateSchedulingPolicy", "", `{"arn":` + q(fzFairshare) + `,"fairsharePolicy":{"computeReservation":5}}`},
		{0, "UpdateSchedulingPolicy", "", `{"arn":` + q(fzPolicy) + `,"fairsharePolicy":{}}`},
		{0, "UpdateSchedulingPolicy", "", `{"arn":` + q(testBase.SchedulingPolicy("none")) + `}`},
		{0, "DeleteSchedulingPolicy", "", `{"arn":` + q(fzFairshare) + `}`},
		{0, "DeleteSchedulingPolicy", "", `{"arn":` + q(fzPolicy) + `}`},
		{0, "DeleteSchedulingPolicy", "", `{"arn":"arn:aws:batch:us-east-1:123456789012:scheduling-policy/a/b"}`},
		{0, "DescribeSchedulingPolicies", "", `{"arns":[` + q(fzPolicy) + `,` + q(fzFairshare) + `]}`},
		{0, "DescribeSchedulingPolicies", "", `{"arns":[true]}`},
		{0, "ListSchedulingPolicies", "", `{}`},
		{0, "ListSchedulingPolicies", "", `{"maxResults":1,"nextToken":` + q(fzFairshare) + `}`},
		{0, "ListSchedulingPolicies", "", `{"maxResults":0}`},

		{0, "CreateServiceEnvironment", "", `{"serviceEnvironmentName":"se2","serviceEnvironmentType":"SAGEMAKER_TRAINING","state":"ENABLED","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":4}],"tags":{"a":"b"}}`},
		{0, "CreateServiceEnvironment", "", `{"serviceEnvironmentName":"se","serviceEnvironmentType":"SAGEMAKER_TRAINING","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":4}]}`},
		{0, "CreateServiceEnvironment", "", `{"serviceEnvironmentName":"se3","serviceEnvironmentType":"SAGEMAKER_TRAINING","capacityLimits":[{"capacityUnit":"gpu","maxCapacity":4}]}`},
		{0, "CreateServiceEnvironment", "", `{"serviceEnvironmentName":"se","capacityLimits":[{"maxCapacity":"4"}]}`},
		{0, "UpdateServiceEnvironment", "", `{"serviceEnvironment":"se","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":8},{"capacityUnit":"ml.p4d.24xlarge","maxCapacity":1}]}`},
		{0, "UpdateServiceEnvironment", "", `{"serviceEnvironment":` + q(testBase.ServiceEnvironment("se")) + `,"state":"DISABLED"}`},
		{0, "UpdateServiceEnvironment", "", `{"serviceEnvironment":"se","capacityLimits":[{"capacityUnit":"ml.m5.large","maxCapacity":1}]}`},
		{0, "UpdateServiceEnvironment", "", `{"serviceEnvironment":"none","state":"ENABLED"}`},
		{0, "DeleteServiceEnvironment", "", `{"serviceEnvironment":"spare"}`},
		{0, "DeleteServiceEnvironment", "", `{"serviceEnvironment":"se"}`},
		{0, "DeleteServiceEnvironment", "", ``},
		{0, "DescribeServiceEnvironments", "", `{}`},
		{0, "DescribeServiceEnvironments", "", `{"serviceEnvironments":["se",` + q(testBase.ServiceEnvironment("fifo-se")) + `],"maxResults":1}`},
		{0, "DescribeServiceEnvironments", "", `{"maxResults":1,"nextToken":"fifo-se"}`},
		{0, "DescribeServiceEnvironments", "", `{"serviceEnvironments":["se","bad/name"]}`},

		{0, "CreateJobQueue", "", `{"jobQueueName":"Q2","priority":2,"jobQueueType":"SAGEMAKER_TRAINING","serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"fifo-se"}],"computeEnvironmentOrder":[]}`},
		{0, "CreateJobQueue", "", `{"jobQueueName":"Q3","priority":1,"jobQueueType":"SAGEMAKER_TRAINING","schedulingPolicyArn":` + q(fzPolicy) +
			`,"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}],"jobStateTimeLimitActions":[{"action":"TERMINATE","maxTimeSeconds":600,"reason":"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY","state":"RUNNABLE"}]}`},
		{0, "CreateJobQueue", "", `{"jobQueueName":"HQ","priority":1,"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}]}`},
		{0, "CreateJobQueue", "", `{"jobQueueName":"HQ","priority":1.5}`},
		{0, "UpdateJobQueue", "", `{"jobQueue":"HQ","priority":5,"state":"DISABLED"}`},
		{0, "UpdateJobQueue", "", `{"jobQueue":"HQ","jobStateTimeLimitActions":[{"action":"TERMINATE","maxTimeSeconds":600,"reason":"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED","state":"RUNNABLE"}]}`},
		{0, "UpdateJobQueue", "", `{"jobQueue":"FQ","schedulingPolicyArn":` + q(fzPolicy) + `}`},
		{0, "UpdateJobQueue", "", `{"jobQueue":"FQ","serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}]}`},
		{0, "UpdateJobQueue", "", `{"jobQueue":"HQ","state":null,"futureMember":{"x":[1,2]},"priority":null}`},
		{0, "DeleteJobQueue", "", `{"jobQueue":"OLD"}`},
		{0, "DeleteJobQueue", "", `{"jobQueue":"HQ"}`},
		{0, "DeleteJobQueue", "", `{"jobQueue":"H Q"}`},
		{0, "DescribeJobQueues", "", `{}`},
		{0, "DescribeJobQueues", "", `{"maxResults":-1}`},
		{0, "DescribeJobQueues", "", `{"jobQueues":["HQ",` + q(testBase.JobQueue("FQ")) + `],"maxResults":1,"nextToken":"FQ"}`},

		{0, "CreateQuotaShare", "", `{"quotaShareName":"QS4","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],` +
			`"resourceSharingConfiguration":{"strategy":"LEND_AND_BORROW","borrowLimit":-1},"preemptionConfiguration":{"inSharePreemption":"DISABLED"},"state":"ENABLED","tags":{"a":"b"}}`},
		{0, "CreateQuotaShare", "", `{"quotaShareName":"QS4","jobQueue":"FQ","capacityLimits":[{"capacityUnit":"ml.m5.large","maxCapacity":1}],` +
			`"resourceSharingConfiguration":{"strategy":"RESERVE"},"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`},
		{0, "CreateQuotaShare", "", `{"quotaShareName":"QS5","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.m5.large","maxCapacity":1}],` +
			`"resourceSharingConfiguration":{"strategy":"LEND"},"preemptionConfiguration":{"inSharePreemption":"ENABLED"}}`},
		{0, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `,"capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":3}]}`},
		{0, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `,"state":"DISABLED","resourceSharingConfiguration":{"strategy":"LEND"},"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`},
		{0, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS2) + `,"resourceSharingConfiguration":{"strategy":"RESERVE","borrowLimit":5}}`},
		{0, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `,"capacityLimits":[{"capacityUnit":"ml.m5.large","maxCapacity":1}]}`},
		{0, "DeleteQuotaShare", "", `{"quotaShareArn":` + q(fzQS3) + `}`},
		{0, "DeleteQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `}`},
		{0, "DescribeQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `}`},
		{0, "DescribeQuotaShare", "", `{"quotaShareArn":` + q(testBase.QuotaShare("FQ", "QS1")) + `}`},
		{0, "ListQuotaShares", "", `{"jobQueue":"HQ"}`},
		{0, "ListQuotaShares", "", `{"jobQueue":"FQ"}`},
		{0, "ListQuotaShares", "", `{"jobQueue":"none"}`},
		{0, "ListQuotaShares", "", `{"jobQueue":` + q(testBase.JobQueue("HQ")) + `,"maxResults":1,"nextToken":"QS1"}`},

		{0, "SubmitServiceJob", "", submit(`,"schedulingPriority":3,"clientToken":"tok-new","tags":{"k":"v"},"retryStrategy":{"attempts":2,"evaluateOnExit":[{"action":"Retry","onStatusReason":"*"}]},"timeoutConfig":{"attemptDurationSeconds":60},"preemptionConfiguration":{"preemptionRetriesBeforeTermination":0}`)},
		{0, "SubmitServiceJob", "", `{"jobName":"j","jobQueue":"FQ","serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":` +
			q(`{"ResourceConfig":{"InstanceGroups":[{"InstanceType":"ml.m5.large","InstanceCount":1,"InstanceGroupName":"a"},{"InstanceType":"ml.m5.large","InstanceCount":1,"InstanceGroupName":"b"}]}}`) + `}`},
		{0, "SubmitServiceJob", "", submit(`,"clientToken":"tok-a"`)},
		{0, "SubmitServiceJob", "", `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS3","serviceRequestPayload":` + q(fzPayload("ml.g5.xlarge", 1)) + `}`},
		{0, "SubmitServiceJob", "", `{"jobName":"j","jobQueue":"FQ","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":` + q(fzPayload("ml.m5.large", 1)) + `}`},
		{0, "SubmitServiceJob", "", `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1","serviceRequestPayload":"{\"TrainingJobName\":\"t\"}"}`},
		{0, "SubmitServiceJob", "", `{"jobName":"j","jobQueue":"OLD","serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":` + q(fzPayload("ml.m5.large", 1)) + `}`},
		{0, "SubmitServiceJob", "", submit(`,"retryStrategy":{}`)},
		{0, "UpdateServiceJob", "", `{"jobId":` + q(fzJob(2)) + `,"schedulingPriority":9}`},
		{0, "UpdateServiceJob", "", `{"jobId":` + q(testBase.ServiceJob(fzJob(1))) + `,"schedulingPriority":0}`},
		{0, "UpdateServiceJob", "", `{"jobId":` + q(fzJob(4)) + `,"schedulingPriority":1}`},
		{0, "UpdateServiceJob", "", `{"jobId":` + q(fzJob(99)) + `,"schedulingPriority":1}`},
		{0, "TerminateServiceJob", "", `{"jobId":` + q(fzJob(2)) + `,"reason":"r"}`},
		{0, "TerminateServiceJob", "", `{"jobId":` + q(fzJob(6)) + `,"reason":"again"}`},
		{0, "TerminateServiceJob", "", `{"jobId":` + q(fzJob(99)) + `,"reason":"r"}`},
		{0, "TerminateServiceJobs", "", `{"jobs":` + jobs(fzJob(2), testBase.ServiceJob(fzJob(3)), fzJob(99), "bad id!") + `,"reason":"r"}`},
		{0, "TerminateServiceJobs", "", `{"jobs":` + jobs(fzJob(99), testBase.JobQueue("HQ")) + `,"reason":"r"}`},
		{0, "TerminateServiceJobs", "", `{"jobs":[],"reason":"r"}`},
		{0, "DescribeServiceJob", "", `{"jobId":` + q(fzJob(1)) + `}`},
		{0, "DescribeServiceJob", "", `{"jobId":` + q(testBase.ServiceJob(fzJob(2))) + `}`},
		{0, "DescribeServiceJob", "", `{"jobId":` + q(fzJob(6)) + `}`},
		{0, "DescribeServiceJob", "", `{"jobId":"arn:aws:batch:eu-west-1:123456789012:service-job/x"}`},
		{0, "ListServiceJobs", "", `{}`},
		{0, "ListServiceJobs", "", `{"jobQueue":"HQ","jobStatus":"RUNNABLE"}`},
		{0, "ListServiceJobs", "", `{"jobQueue":"FQ","filters":[{"name":"JOB_NAME","values":["fifo*"]}],"maxResults":1}`},
		{0, "ListServiceJobs", "", `{"filters":[{"name":"AFTER_CREATED_AT","values":["0"]}]}`},
		{0, "ListServiceJobs", "", `{"jobStatus":"RUNNING","nextToken":"bogus"}`},
		{0, "GetJobQueueSnapshot", "", `{"jobQueue":"HQ"}`},
		{0, "GetJobQueueSnapshot", "", `{"jobQueue":"FQ"}`},
		{0, "GetJobQueueSnapshot", "", `{"jobQueue":"none"}`},

		{0, "TagResource", esc(testBase.JobQueue("HQ")), `{"tags":{"k":"v"}}`},
		{0, "TagResource", esc(testBase.ServiceJob(fzJob(2))), `{"tags":{"team":"nlp","a b":"c/d"}}`},
		{0, "TagResource", fzQS1, `{"tags":{"k":"v"}}`},
		{0, "TagResource", esc(testBase.JobQueue("none")), `{"tags":{"k":"v"}}`},
		{0, "TagResource", esc(fzPolicy), `{}`},
		{0, "ListTagsForResource", esc(fzPolicy), ``},
		{0, "ListTagsForResource", fzQS1, ``},
		{0, "ListTagsForResource", esc(testBase.ServiceJob(fzJob(1))), ``},
		{0, "ListTagsForResource", "", ``},
		{0, "UntagResource", esc(testBase.ServiceEnvironment("se")) + "?tagKeys=team", ``},
		{0, "UntagResource", esc(testBase.ServiceJob(fzJob(1))) + "?tagKeys=team&tagKeys=x%26y%3Dz", ``},
		{0, "UntagResource", esc(fzQS1), ``},

		{0, "GET CreateJobQueue", "", `{}`},
		{0, "PUT TagResource", esc(fzPolicy), `{}`},
		{0, "createcomputeenvironment", "", `{}`},
		{0, "/v1/deletejobqueue/", "", `{"jobQueue":"OLD"}`},

		{1, "DeleteJobQueue", "", `{"jobQueue":"HQ"}`},
		{1, "DeleteJobQueue", "", `{"jobQueue":` + q(testBase.JobQueue("FQ")) + `}`},
		{1, "DeleteQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `}`},
		{1, "DeleteServiceEnvironment", "", `{"serviceEnvironment":"fifo-se"}`},
		{1, "UpdateJobQueue", "", `{"jobQueue":"HQ","state":"ENABLED"}`},
		{1, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `,"state":"ENABLED"}`},
		{1, "UpdateServiceEnvironment", "", `{"serviceEnvironment":"fifo-se","state":"ENABLED"}`},
		{1, "SubmitServiceJob", "", submit(``)},
		{1, "GetJobQueueSnapshot", "", `{"jobQueue":"HQ"}`},
		{1, "DescribeServiceJob", "", `{"jobId":` + q(fzJob(5)) + `}`},
		{2, "DescribeServiceJob", "", `{"jobId":` + q(fzJob(1)) + `}`},
		{2, "UpdateServiceJob", "", `{"jobId":` + q(fzJob(1)) + `,"schedulingPriority":9999}`},
		{2, "TerminateServiceJob", "", `{"jobId":` + q(fzJob(7)) + `,"reason":"r"}`},
		{2, "TerminateServiceJobs", "", `{"jobs":` + jobs(fzJob(1), fzJob(7)) + `,"reason":"r"}`},
		{2, "GetJobQueueSnapshot", "", `{"jobQueue":"HQ"}`},
		{2, "ListServiceJobs", "", `{"jobQueue":"HQ","jobStatus":"RUNNABLE"}`},
		{2, "UpdateQuotaShare", "", `{"quotaShareArn":` + q(fzQS1) + `,"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`},
	}
}

// Ensure FuzzAPI's seeds reach every operation the handler serves, with at
// least one request that succeeds and one that is refused, so that the
// fuzzer starts from both sides of each operation's checks.
func TestFuzzSeedsCoverEveryOperation(t *testing.T) {
	var fixtures []*apiFixture
	for v := range fixtureVariants {
		fixtures = append(fixtures, newAPIFixture(t, v))
	}
	ok, refused := map[string]bool{}, map[string]bool{}
	for _, s := range fuzzSeeds() {
		fx := fixtures[s.variant]
		req, valid := fuzzRequest(s.op, s.resource, []byte(s.body))
		if !valid {
			t.Fatalf("seed %v is not a request", s)
		}
		routed, err := route(req)
		if err != nil {
			continue
		}
		fx.ready(t)
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			ok[routed.name] = true
			fx.dirty = true // refused requests change nothing: FuzzAPI checks it
		} else {
			refused[routed.name] = true
		}
	}
	var all []string
	for _, op := range operations {
		all = append(all, op.name)
	}
	for _, op := range tagOperations {
		all = append(all, op.name)
	}
	for _, name := range all {
		if !ok[name] || !refused[name] {
			t.Errorf("%s: a seed that succeeds: %v, one that is refused: %v", name, ok[name], refused[name])
		}
	}
}
