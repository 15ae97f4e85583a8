package batchapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/engine"
)

// alice is the caller the tests' authenticator vouches for.
var alice = access.Identity{AccessKeyID: "AKIDALICE", Principal: "arn:aws:iam::123456789012:user/alice"}

// newAuthServer serves the API in front of a fake engine behind the
// middleware, which authenticates every request as alice.
func newAuthServer(t *testing.T, authz access.Authorizer) (*httptest.Server, *fakeEngine) {
	t.Helper()
	f := &fakeEngine{}
	opts := testOptions(t)
	opts.Authorizer = authz
	h := newServer(f, opts)
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return alice, nil })
	return serve(t, access.Middleware(h, authn, h.WriteError)), f
}

type authCase struct {
	method, path, body string
	action, resource   string
}

// authCases holds, for every operation, a good request and the action and
// resource it must be authorized on.
func authCases() map[string]authCase {
	sp := testBase.SchedulingPolicy("sp")
	se := testBase.ServiceEnvironment("se")
	hq := testBase.JobQueue("HQ")
	qs := testBase.QuotaShare("HQ", "QS1")
	job := testBase.ServiceJob(jobID)
	tagsPath := tagsPrefix + url.PathEscape(qs)
	post := func(op, body, action, resource string) authCase {
		return authCase{"POST", "/v1/" + op, body, action, resource}
	}
	return map[string]authCase{
		"CreateSchedulingPolicy":      post("createschedulingpolicy", `{"name":"sp","quotaSharePolicy":{"idleResourceAssignmentStrategy":"FIFO"}}`, "batch:CreateSchedulingPolicy", sp),
		"UpdateSchedulingPolicy":      post("updateschedulingpolicy", `{"arn":"`+sp+`"}`, "batch:UpdateSchedulingPolicy", sp),
		"DeleteSchedulingPolicy":      post("deleteschedulingpolicy", `{"arn":"`+sp+`"}`, "batch:DeleteSchedulingPolicy", sp),
		"DescribeSchedulingPolicies":  post("describeschedulingpolicies", `{"arns":["`+sp+`"]}`, "batch:DescribeSchedulingPolicies", "*"),
		"ListSchedulingPolicies":      post("listschedulingpolicies", `{}`, "batch:ListSchedulingPolicies", "*"),
		"CreateServiceEnvironment":    post("createserviceenvironment", `{"serviceEnvironmentName":"se","serviceEnvironmentType":"SAGEMAKER_TRAINING","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":4}]}`, "batch:CreateServiceEnvironment", se),
		"UpdateServiceEnvironment":    post("updateserviceenvironment", `{"serviceEnvironment":"se","state":"DISABLED"}`, "batch:UpdateServiceEnvironment", se),
		"DeleteServiceEnvironment":    post("deleteserviceenvironment", `{"serviceEnvironment":"`+se+`"}`, "batch:DeleteServiceEnvironment", se),
		"DescribeServiceEnvironments": post("describeserviceenvironments", `{}`, "batch:DescribeServiceEnvironments", "*"),
		"CreateJobQueue":              post("createjobqueue", `{"jobQueueName":"HQ","priority":1,"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}]}`, "batch:CreateJobQueue", hq),
		"UpdateJobQueue":              post("updatejobqueue", `{"jobQueue":"HQ","state":"DISABLED"}`, "batch:UpdateJobQueue", hq),
		"DeleteJobQueue":              post("deletejobqueue", `{"jobQueue":"HQ"}`, "batch:DeleteJobQueue", hq),
		"DescribeJobQueues":           post("describejobqueues", `{"jobQueues":["HQ"]}`, "batch:DescribeJobQueues", "*"),
		"GetJobQueueSnapshot":         post("getjobqueuesnapshot", `{"jobQueue":"`+hq+`"}`, "batch:GetJobQueueSnapshot", hq),
		"CreateQuotaShare": post("createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],`+
			`"resourceSharingConfiguration":{"strategy":"LEND"},"preemptionConfiguration":{"inSharePreemption":"DISABLED"}}`, "batch:CreateQuotaShare", qs),
		"UpdateQuotaShare":     post("updatequotashare", `{"quotaShareArn":"`+qs+`","state":"DISABLED"}`, "batch:UpdateQuotaShare", qs),
		"DeleteQuotaShare":     post("deletequotashare", `{"quotaShareArn":"`+qs+`"}`, "batch:DeleteQuotaShare", qs),
		"DescribeQuotaShare":   post("describequotashare", `{"quotaShareArn":"`+qs+`"}`, "batch:DescribeQuotaShare", qs),
		"ListQuotaShares":      post("listquotashares", `{"jobQueue":"HQ"}`, "batch:ListQuotaShares", hq),
		"SubmitServiceJob":     post("submitservicejob", `{"jobName":"train","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":"{}","quotaShareName":"QS1"}`, "batch:SubmitServiceJob", qs),
		"UpdateServiceJob":     post("updateservicejob", `{"jobId":"`+jobID+`","schedulingPriority":3}`, "batch:UpdateServiceJob", job),
		"TerminateServiceJob":  post("terminateservicejob", `{"jobId":"`+jobID+`","reason":"r"}`, "batch:TerminateServiceJob", job),
		"TerminateServiceJobs": post("terminateservicejobs", `{"jobs":["`+job+`"],"reason":"r"}`, "batch:TerminateServiceJob", job),
		"DescribeServiceJob":   post("describeservicejob", `{"jobId":"`+job+`"}`, "batch:DescribeServiceJob", job),
		"ListServiceJobs":      post("listservicejobs", `{"jobQueue":"HQ"}`, "batch:ListServiceJobs", hq),
		"TagResource":          {"POST", tagsPath, `{"tags":{"team":"nlp"}}`, "batch:TagResource", qs},
		"UntagResource":        {"DELETE", tagsPath + "?tagKeys=team", "", "batch:UntagResource", qs},
		"ListTagsForResource":  {"GET", tagsPath, "", "batch:ListTagsForResource", qs},
	}
}

// Ensure every operation asks the authorizer exactly once, with the
// caller the middleware authenticated, its IAM action and the resource as
// IAM names it, and then acts.
func TestEveryOperationAuthorizesOnce(t *testing.T) {
	rec := &accesstest.Recorder{}
	srv, fake := newAuthServer(t, rec)
	cases := authCases()
	for _, r := range Routes() {
		c, ok := cases[r.Operation]
		if !ok {
			t.Errorf("%s (%s %s) has no case here: add one", r.Operation, r.Method, r.Path)
			continue
		}
		delete(cases, r.Operation)
		fake.reset()
		resp := do(t, srv, c.method, c.path, c.body)
		if resp.status != http.StatusOK {
			t.Errorf("%s: %d %s", r.Operation, resp.status, resp.body)
		}
		want := []accesstest.Call{{Principal: alice.Principal, Action: c.action, Resource: c.resource}}
		if got := rec.Take(); !slices.Equal(got, want) {
			t.Errorf("%s: authorizer asked %v, want %v", r.Operation, got, want)
		}
		if fake.called() != 1 {
			t.Errorf("%s: the engine got %d calls", r.Operation, fake.called())
		}
	}
	for op := range cases {
		t.Errorf("case %s names no operation", op)
	}
}

// Ensure a refused operation answers AccessDeniedException (403) in AWS's
// words and leaves the engine alone.
func TestDeniedOperationChangesNothing(t *testing.T) {
	srv, fake := newAuthServer(t, &accesstest.Recorder{Deny: true})
	for op, c := range authCases() {
		fake.reset()
		resp := do(t, srv, c.method, c.path, c.body)
		msg := "User: " + alice.Principal + " is not authorized to perform: " + c.action + " on resource: " + c.resource
		if op == "TerminateServiceJobs" {
			// As AWS, each job is authorized on its own and a refused one
			// is reported in errors.
			var out struct {
				Successful []string `json:"successful"`
				Errors     []struct{ Code, Message string }
			}
			json.Unmarshal([]byte(resp.body), &out)
			if resp.status != 200 || len(out.Successful) != 0 || len(out.Errors) != 1 ||
				out.Errors[0].Code != "AccessDeniedException" || out.Errors[0].Message != msg {
				t.Errorf("%s: %d %s", op, resp.status, resp.body)
			}
		} else {
			wantRawError(t, resp, http.StatusForbidden, "AccessDeniedException", msg)
		}
		if n := fake.called(); n != 0 {
			t.Errorf("%s: the engine got %d calls after a refusal", op, n)
		}
	}
}

// Ensure the Go SDK reads a refusal as AccessDeniedException with AWS's
// message.
func TestDeniedThroughSDK(t *testing.T) {
	srv, _ := newAuthServer(t, &accesstest.Recorder{Deny: true})
	_, err := sdkClient(srv).TerminateServiceJob(t.Context(), &batch.TerminateServiceJobInput{JobId: aws.String(jobID), Reason: aws.String("r")})
	var apiErr interface {
		ErrorCode() string
		ErrorMessage() string
	}
	want := "User: " + alice.Principal + " is not authorized to perform: batch:TerminateServiceJob on resource: " + testBase.ServiceJob(jobID)
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" || apiErr.ErrorMessage() != want {
		t.Errorf("got %v", err)
	}
}

// Ensure a request that authentication refuses is answered in AWS's shape
// with the authenticator's code, and reaches no operation.
func TestAuthenticationRefused(t *testing.T) {
	f := &fakeEngine{}
	h := newServer(f, testOptions(t))
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) {
		return access.Identity{}, &access.AuthError{Status: 403, Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}
	})
	srv := serve(t, access.Middleware(h, authn, h.WriteError))
	resp := do(t, srv, "POST", "/v1/describeservicejob", `{"jobId":"`+jobID+`"}`)
	wantRawError(t, resp, 403, "UnrecognizedClientException", "The security token included in the request is invalid.")
	if !uuidRE.MatchString(resp.header.Get("x-amzn-RequestId")) {
		t.Errorf("x-amzn-RequestId = %q", resp.header.Get("x-amzn-RequestId"))
	}
	if f.called() != 0 {
		t.Error("the engine was called")
	}
}

// Ensure the operations the console shares check their input as the API
// does, before asking the authorizer.
func TestSharedJobOperations(t *testing.T) {
	f := &fakeEngine{}
	rec := &accesstest.Recorder{}
	opts := testOptions(t)
	opts.Authorizer = rec
	h := newServer(f, opts)
	ctx := access.WithIdentity(t.Context(), alice)
	if _, err := h.UpdateServiceJob(ctx, jobID, nil); err == nil || err.Error() != "schedulingPriority is required" {
		t.Errorf("no priority: %v", err)
	}
	if err := h.TerminateServiceJob(ctx, "a.b", "r"); err == nil || err.Error() != "jobId must be a service job ID or ARN" {
		t.Errorf("bad ID: %v", err)
	}
	if got := rec.Take(); len(got) != 0 || f.called() != 0 {
		t.Errorf("bad input reached the authorizer %v or the engine (%d calls)", got, f.called())
	}
	j, err := h.UpdateServiceJob(ctx, testBase.ServiceJob(jobID), aws.Int(5))
	if err != nil || j.JobID != jobID {
		t.Fatalf("update: %+v, %v", j, err)
	}
	if got, want := f.last(t), (call{"UpdateServiceJob", updateJobCall{jobID, 5}}); got != want {
		t.Errorf("engine got %+v, want %+v", got, want)
	}
	if got := rec.Take(); !slices.Equal(got, []accesstest.Call{{Principal: alice.Principal, Action: "batch:UpdateServiceJob", Resource: testBase.ServiceJob(jobID)}}) {
		t.Errorf("authorizer asked %v", got)
	}
}

// Ensure a submission records its signer as the job's owner, and an
// anonymous one records none.
func TestSubmitRecordsOwner(t *testing.T) {
	for name, id := range map[string]access.Identity{"Signed": alice, "Anonymous": access.Anonymous} {
		t.Run(name, func(t *testing.T) {
			f := &fakeEngine{}
			h := newServer(f, testOptions(t))
			authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return id, nil })
			srv := serve(t, access.Middleware(h, authn, h.WriteError))
			c := authCases()["SubmitServiceJob"]
			if r := do(t, srv, c.method, c.path, c.body); r.status != 200 {
				t.Fatalf("submit: %d %s", r.status, r.body)
			}
			want := alice.Principal
			if id.Anonymous {
				want = ""
			}
			if got := f.last(t).in.(engine.SubmitServiceJobInput).Owner; got != want {
				t.Errorf("owner %q, want %q", got, want)
			}
		})
	}
}

// Ensure that where the server serves S3 itself, a submission's S3 data
// is authorized for its caller as the caller's own S3 calls are: reading
// its channels, writing its outputs, both for its checkpoints; and that a
// refusal leaves the engine alone.
func TestSubmitAuthorizesItsS3Data(t *testing.T) {
	rec := &accesstest.Recorder{}
	f := &fakeEngine{}
	opts := testOptions(t)
	opts.Authorizer, opts.ServesS3 = rec, true
	h := newServer(f, opts)
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return alice, nil })
	srv := serve(t, access.Middleware(h, authn, h.WriteError))
	payload := `{"TrainingJobName":"t","ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},` +
		`"InputDataConfig":[{"ChannelName":"train","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://team-b/data/"}}},` +
		`{"ChannelName":"local","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"file:///srv/data"}}}],` +
		`"OutputDataConfig":{"S3OutputPath":"s3://team-a/out"},"CheckpointConfig":{"S3Uri":"s3://team-a/ckpt/run1"}}`
	body, _ := json.Marshal(map[string]any{"jobName": "j", "jobQueue": "q", "serviceJobType": "SAGEMAKER_TRAINING", "serviceRequestPayload": payload})
	if r := do(t, srv, "POST", "/v1/submitservicejob", string(body)); r.status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.status, r.body)
	}
	call := func(action, resource string) accesstest.Call {
		return accesstest.Call{Principal: alice.Principal, Action: action, Resource: resource}
	}
	want := []accesstest.Call{
		call("batch:SubmitServiceJob", "arn:aws:batch:"+testRegion+":"+testAccount+":job-queue/q"),
		call("s3:ListBucket", "arn:aws:s3:::team-b"), call("s3:GetObject", "arn:aws:s3:::team-b/data/"),
		call("s3:ListBucket", "arn:aws:s3:::team-a"), call("s3:GetObject", "arn:aws:s3:::team-a/ckpt/run1"),
		call("s3:PutObject", "arn:aws:s3:::team-a/ckpt/run1"), call("s3:PutObject", "arn:aws:s3:::team-a/out"),
	}
	if got := rec.Take(); !slices.Equal(got, want) {
		t.Errorf("the authorizer was asked\n%v\nwant\n%v", got, want)
	}
	// The engine is handed the parse the authorization read.
	in := f.last(t).in.(engine.SubmitServiceJobInput)
	if r := in.Request; r == nil || r.OutputDataConfig.S3OutputPath != "s3://team-a/out" || len(r.InputDataConfig) != 2 {
		t.Errorf("the engine was handed the request %+v, want the payload parsed", r)
	}

	// A caller allowed to submit, but not to read team-b's data, is
	// refused, and the job is never made.
	f.reset()
	opts.Authorizer = access.AuthorizerFunc(func(_ context.Context, _ access.Identity, action, resource string) error {
		if strings.Contains(resource, ":::team-b") {
			return &access.AuthError{Status: http.StatusForbidden, Code: "AccessDeniedException", Message: "not " + action + " on " + resource}
		}
		return nil
	})
	h = newServer(f, opts)
	srv = serve(t, access.Middleware(h, authn, h.WriteError))
	if r := do(t, srv, "POST", "/v1/submitservicejob", string(body)); r.status != http.StatusForbidden || !strings.Contains(r.body, "s3:ListBucket on arn:aws:s3:::team-b") {
		t.Errorf("a submit naming another team's data: %d %s", r.status, r.body)
	}
	if f.called() != 0 {
		t.Errorf("a refused submit reached the engine")
	}
}
