package batchapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// wantRawError checks a raw response is the given error with a message
// containing want.
func wantRawError(t *testing.T, r rawResponse, status int, code, want string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %s)", r.status, status, r.body)
	}
	if got := r.header.Get("X-Amzn-ErrorType"); got != code {
		t.Errorf("X-Amzn-ErrorType = %q, want %q", got, code)
	}
	var body struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if body.Type != code || !strings.Contains(body.Message, want) {
		t.Errorf("body = %s, want __type %s and a message containing %q", r.body, code, want)
	}
}

// Ensure a request missing a required member, which the SDK would refuse
// to send but boto3 sends, gets a ClientException naming the member.
func TestMissingRequired(t *testing.T) {
	srv, fake := newFakeServer(t)
	qsArn := testBase.QuotaShare("HQ", "QS1")
	tests := []struct{ op, body, want string }{
		{"createschedulingpolicy", `{}`, "name is required"},
		{"createschedulingpolicy", `{"name":"sp","quotaSharePolicy":{}}`, "quotaSharePolicy.idleResourceAssignmentStrategy is required"},
		{"createschedulingpolicy", `{"name":"sp","fairsharePolicy":{"shareDistribution":[{"weightFactor":1}]}}`, "fairsharePolicy.shareDistribution[0].shareIdentifier is required"},
		{"updateschedulingpolicy", `{}`, "arn is required"},
		{"deleteschedulingpolicy", `{}`, "arn is required"},
		{"describeschedulingpolicies", `{}`, "arns is required"},
		{"createserviceenvironment", `{}`, "serviceEnvironmentName is required"},
		{"createserviceenvironment", `{"serviceEnvironmentName":"se","capacityLimits":[]}`, "serviceEnvironmentType is required"},
		{"createserviceenvironment", `{"serviceEnvironmentName":"se","serviceEnvironmentType":"SAGEMAKER_TRAINING"}`, "capacityLimits is required"},
		{"updateserviceenvironment", `{"state":"DISABLED"}`, "serviceEnvironment is required"},
		{"deleteserviceenvironment", ``, "serviceEnvironment is required"},
		{"createjobqueue", `{}`, "jobQueueName is required"},
		{"createjobqueue", `{"jobQueueName":"HQ"}`, "priority is required"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":1,"serviceEnvironmentOrder":[{"serviceEnvironment":"se"}]}`, "serviceEnvironmentOrder[0].order is required"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":1,"serviceEnvironmentOrder":[{"order":1}]}`, "serviceEnvironmentOrder[0].serviceEnvironment is required"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":1,"serviceEnvironmentOrder":[{"order":1,"serviceEnvironment":"se"}],` +
			`"jobStateTimeLimitActions":[{"action":"TERMINATE","reason":"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY","state":"RUNNABLE"}]}`,
			"jobStateTimeLimitActions[0].maxTimeSeconds is required"},
		{"updatejobqueue", `{}`, "jobQueue is required"},
		{"deletejobqueue", `{}`, "jobQueue is required"},
		{"createquotashare", `{}`, "quotaShareName is required"},
		{"createquotashare", `{"quotaShareName":"QS1"}`, "jobQueue is required"},
		{"createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ"}`, "capacityLimits is required"},
		{"createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}]}`, "resourceSharingConfiguration is required"},
		{"createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],"resourceSharingConfiguration":{}}`,
			"resourceSharingConfiguration.strategy is required"},
		{"createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],"resourceSharingConfiguration":{"strategy":"LEND"}}`,
			"preemptionConfiguration is required"},
		{"createquotashare", `{"quotaShareName":"QS1","jobQueue":"HQ","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":1}],"resourceSharingConfiguration":{"strategy":"LEND"},"preemptionConfiguration":{}}`,
			"preemptionConfiguration.inSharePreemption is required"},
		{"updatequotashare", `{}`, "quotaShareArn is required"},
		{"updatequotashare", `{"quotaShareArn":"` + qsArn + `","resourceSharingConfiguration":{"borrowLimit":5}}`, "resourceSharingConfiguration.strategy is required"},
		{"deletequotashare", `{}`, "quotaShareArn is required"},
		{"describequotashare", `{}`, "quotaShareArn is required"},
		{"listquotashares", `{}`, "jobQueue is required"},
		{"submitservicejob", `{}`, "jobName is required"},
		{"submitservicejob", `{"jobName":"j"}`, "jobQueue is required"},
		{"submitservicejob", `{"jobName":"j","jobQueue":"HQ"}`, "serviceJobType is required"},
		{"submitservicejob", `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING"}`, "serviceRequestPayload is required"},
		{"submitservicejob", `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":"{}","retryStrategy":{}}`, "retryStrategy.attempts is required"},
		{"updateservicejob", `{}`, "jobId is required"},
		{"updateservicejob", `{"jobId":"` + jobID + `"}`, "schedulingPriority is required"},
		{"terminateservicejob", `{"reason":"x"}`, "jobId is required"},
		{"terminateservicejob", `{"jobId":"` + jobID + `"}`, "reason is required"},
		{"terminateservicejobs", `{"reason":"x"}`, "jobs is required"},
		{"terminateservicejobs", `{"jobs":[]}`, "jobs must have at least 1 entry"},
		{"terminateservicejobs", `{"jobs":["` + jobID + `"]}`, "reason is required"},
		{"describeservicejob", `{}`, "jobId is required"},
		{"getjobqueuesnapshot", `{}`, "jobQueue is required"},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.want, func(t *testing.T) {
			fake.reset()
			wantRawError(t, do(t, srv, "POST", "/v1/"+tt.op, tt.body), 400, "ClientException", tt.want)
			if n := fake.called(); n != 0 {
				t.Errorf("the engine was called %d times for a bad request", n)
			}
		})
	}
	t.Run("TagResource/tags", func(t *testing.T) {
		r := do(t, srv, "POST", "/v1/tags/"+url.PathEscape(qsArn), `{}`)
		wantRawError(t, r, 400, "ClientException", "tags is required")
	})
	t.Run("UntagResource/tagKeys", func(t *testing.T) {
		r := do(t, srv, "DELETE", "/v1/tags/"+url.PathEscape(qsArn), ``)
		wantRawError(t, r, 400, "ClientException", "tagKeys must have at least 1 entry")
	})
}

// Ensure bodies that are not the operation's JSON object get a
// ClientException that says what is wrong.
func TestMalformedBody(t *testing.T) {
	srv, _ := newFakeServer(t)
	tests := []struct{ op, body, want string }{
		{"createjobqueue", `{"jobQueueName":`, "The request body is not valid JSON: unexpected end of JSON input"},
		{"createjobqueue", `{"jobQueueName":"HQ",}`, "The request body is not valid JSON: invalid character '}' looking for beginning of object key string (at byte 22)"},
		{"createjobqueue", `{"jobQueueName":"HQ"} {}`, "The request body is not valid JSON"},
		{"createjobqueue", `[]`, "The request body must be a JSON object, not an array"},
		{"createjobqueue", `"HQ"`, "The request body must be a JSON object, not a string"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":"high"}`, "Invalid value for priority: expected an integer, got a string"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":1.5}`, "Invalid value for priority: expected an integer, got 1.5"},
		{"createjobqueue", `{"jobQueueName":"HQ","priority":1,"tags":["a"]}`, "Invalid value for tags: expected an object, got an array"},
		{"createjobqueue", `{"jobQueueName":7}`, "Invalid value for jobQueueName: expected a string, got a number"},
		{"createserviceenvironment", `{"serviceEnvironmentName":"se","capacityLimits":[{"maxCapacity":"4"}]}`, "Invalid value for capacityLimits.maxCapacity: expected an integer, got a string"},
		{"createschedulingpolicy", `{"name":"sp","tags":{"a":1}}`, "Invalid value for tags: expected a string, got a number"},
		{"terminateservicejobs", `{"jobs":"` + jobID + `"}`, "Invalid value for jobs: expected an array, got a string"},
		{"describeschedulingpolicies", `{"arns":[true]}`, "Invalid value for arns: expected a string, got a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.body, func(t *testing.T) {
			wantRawError(t, do(t, srv, "POST", "/v1/"+tt.op, tt.body), 400, "ClientException", tt.want)
		})
	}
}

// Ensure integer members beyond AWS's 32-bit Integer, which the SDKs
// cannot send but other clients can, are refused: the SDKs could not read
// them back.
func TestIntegerMembersFit32Bits(t *testing.T) {
	srv, fake := newFakeServer(t)
	const big = "2147483648"
	payload := strconv.Quote(`{"ResourceConfig":{"InstanceType":"ml.g5.xlarge"}}`)
	submit := `{"jobName":"j","jobQueue":"HQ","serviceJobType":"SAGEMAKER_TRAINING","serviceRequestPayload":` + payload
	tests := []struct{ op, body, want string }{
		{"createserviceenvironment", `{"serviceEnvironmentName":"se","serviceEnvironmentType":"SAGEMAKER_TRAINING","capacityLimits":[{"capacityUnit":"ml.g5.xlarge","maxCapacity":` + big + `}]}`,
			"capacityLimits[0].maxCapacity must be at most 2147483647, not 2147483648"},
		{"updatequotashare", `{"quotaShareArn":"` + testBase.QuotaShare("HQ", "QS1") + `","resourceSharingConfiguration":{"strategy":"LEND_AND_BORROW","borrowLimit":` + big + `}}`,
			"resourceSharingConfiguration.borrowLimit must be at most 2147483647, not 2147483648"},
		{"submitservicejob", submit + `,"timeoutConfig":{"attemptDurationSeconds":18446744074}}`,
			"timeoutConfig.attemptDurationSeconds must be at most 2147483647, not 18446744074"},
		{"submitservicejob", submit + `,"preemptionConfiguration":{"preemptionRetriesBeforeTermination":` + big + `}}`,
			"preemptionConfiguration.preemptionRetriesBeforeTermination must be at most 2147483647, not 2147483648"},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.want, func(t *testing.T) {
			fake.reset()
			wantRawError(t, do(t, srv, "POST", "/v1/"+tt.op, tt.body), 400, "ClientException", tt.want)
			if n := fake.called(); n != 0 {
				t.Errorf("the engine was called %d times for a bad request", n)
			}
		})
	}
}

// Ensure unknown members and explicit nulls are ignored: clients may be
// newer than the server, and boto3 users may pass None.
func TestLenientBody(t *testing.T) {
	srv, fake := newFakeServer(t)
	r := do(t, srv, "POST", "/v1/updatejobqueue", `{"jobQueue":"HQ","state":null,"futureMember":{"x":[1,2]},"priority":null}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := fake.last(t).in.(batchmodel.UpdateJobQueueInput)
	if got.JobQueue != "HQ" || got.State != "" || got.Priority != nil {
		t.Errorf("engine got %+v", got)
	}
}

// Ensure the error response is byte for byte what AWS sends: the header
// names spelled as AWS spells them, and the JSON body.
func TestErrorWireFormat(t *testing.T) {
	srv, _ := newFakeServer(t)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jobQueue":"H Q"}`
	fmt.Fprintf(conn, "POST /v1/deletejobqueue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	raw, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	head, gotBody, _ := strings.Cut(string(raw), "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	if lines[0] != "HTTP/1.1 400 Bad Request" {
		t.Errorf("status line %q", lines[0])
	}
	want := `{"__type":"ClientException","message":"jobQueue must be the name or ARN of a job queue; a name is 1 to 128 letters, numbers, hyphens (-) and underscores (_)"}`
	if gotBody != want {
		t.Errorf("body\n got %s\nwant %s", gotBody, want)
	}
	headers := map[string]string{}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ": ")
		headers[k] = v
	}
	if headers["X-Amzn-ErrorType"] != "ClientException" {
		t.Errorf("no X-Amzn-ErrorType: ClientException in %q", head)
	}
	if !uuidRE.MatchString(headers["x-amzn-RequestId"]) {
		t.Errorf("no x-amzn-RequestId: <uuid> in %q", head)
	}
	if headers["Content-Type"] != "application/json" || headers["Content-Length"] != fmt.Sprint(len(want)) {
		t.Errorf("Content-Type/Length wrong in %q", head)
	}
}

// Ensure every response, success or error, carries its own request ID.
func TestRequestID(t *testing.T) {
	srv, _ := newFakeServer(t)
	seen := map[string]bool{}
	for _, r := range []rawResponse{
		do(t, srv, "POST", "/v1/describejobqueues", `{}`),
		do(t, srv, "POST", "/v1/deletejobqueue", `{"jobQueue":"HQ"}`),
		do(t, srv, "POST", "/v1/deletejobqueue", `{}`),
		do(t, srv, "GET", "/v1/nothing", ``),
	} {
		id := r.header.Get("x-amzn-RequestId")
		if !uuidRE.MatchString(id) || seen[id] {
			t.Errorf("x-amzn-RequestId %q: not a new UUID", id)
		}
		seen[id] = true
	}
}

// Ensure paths and methods that name no operation get a ClientException
// (404 or 405), so a client learns what it got wrong.
func TestRouting(t *testing.T) {
	srv, fake := newFakeServer(t)
	tests := []struct {
		method, path    string
		status          int
		want, wantAllow string
	}{
		{"POST", "/v1/createcomputeenvironment", 404, "No operation at POST /v1/createcomputeenvironment", ""},
		{"POST", "/v1/CreateJobQueue", 404, "No operation at POST /v1/CreateJobQueue", ""},
		{"POST", "/v1/createjobqueue/", 404, "No operation", ""},
		{"POST", "/", 404, "No operation at POST /", ""},
		{"POST", "/v2/createjobqueue", 404, "No operation", ""},
		{"GET", "/v1/createjobqueue", 405, "Method GET is not allowed on /v1/createjobqueue; use POST", "POST"},
		{"DELETE", "/v1/deletejobqueue", 405, "Method DELETE is not allowed", "POST"},
		{"PUT", "/v1/tags/" + url.PathEscape(testBase.JobQueue("HQ")), 405, "Method PUT is not allowed", "GET, POST, DELETE"},
		{"GET", "/v1/tags/", 400, "resourceArn is required", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, `{}`)
			wantRawError(t, r, tt.status, "ClientException", tt.want)
			if got := r.header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
	if n := fake.called(); n != 0 {
		t.Errorf("the engine was called %d times", n)
	}
}

// Ensure the tag operations find the resource ARN in one percent-encoded
// path segment, as the SDKs send it, and also when a client leaves the
// ARN's slashes unencoded; behind a ServeMux too, as cmd/sharq mounts it.
func TestTagRoutesDecodeARN(t *testing.T) {
	fake := &fakeEngine{}
	mux := http.NewServeMux()
	mux.Handle("/v1/", newServer(fake, testOptions(t)))
	for name, srv := range map[string]*httptest.Server{"direct": serve(t, newServer(fake, testOptions(t))), "mux": serve(t, mux)} {
		t.Run(name, func(t *testing.T) {
			client := sdkClient(srv)
			qsArn := testBase.QuotaShare("HQ", "QS1")
			check := func(op string, want tagCall) {
				t.Helper()
				c := fake.last(t)
				if c.op != op || fmt.Sprint(c.in) != fmt.Sprint(want) {
					t.Errorf("engine got %s %v, want %s %v", c.op, c.in, op, want)
				}
				fake.reset()
			}
			fake.reset()
			if _, err := client.TagResource(t.Context(), &batch.TagResourceInput{ResourceArn: aws.String(qsArn), Tags: map[string]string{"a b": "c/d"}}); err != nil {
				t.Fatal(err)
			}
			check("TagResource", tagCall{arn: qsArn, tags: map[string]string{"a b": "c/d"}})
			out, err := client.ListTagsForResource(t.Context(), &batch.ListTagsForResourceInput{ResourceArn: aws.String(qsArn)})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(out.Tags) != fmt.Sprint(tags()) {
				t.Errorf("ListTagsForResource tags = %v", out.Tags)
			}
			check("ListTagsForResource", tagCall{arn: qsArn})
			if _, err := client.UntagResource(t.Context(), &batch.UntagResourceInput{ResourceArn: aws.String(qsArn), TagKeys: []string{"a b", "x&y=z"}}); err != nil {
				t.Fatal(err)
			}
			check("UntagResource", tagCall{arn: qsArn, keys: []string{"a b", "x&y=z"}})

			r := do(t, srv, "GET", "/v1/tags/"+qsArn, ``)
			if r.status != 200 || r.body != `{"tags":{"team":"vision"}}` {
				t.Errorf("GET with unencoded slashes: %d %s", r.status, r.body)
			}
			check("ListTagsForResource", tagCall{arn: qsArn})
			r = do(t, srv, "GET", "/v1/tags/arn%3Aaws%3Abatch%3Aus-east-1%3A123456789012%3Ajob-queue%2FHQ%2Fquota-share%2FQS1", ``)
			if r.status != 200 {
				t.Errorf("GET with the wire example path: %d %s", r.status, r.body)
			}
			check("ListTagsForResource", tagCall{arn: qsArn})
		})
	}
}

// Ensure TerminateServiceJobs reports malformed job IDs per job, as
// ValidationException, and terminates the rest; ARNs go to the engine as
// IDs.
func TestTerminateServiceJobs(t *testing.T) {
	srv, fake := newFakeServer(t)
	const other = "0f2c4b8e-2f0e-4a59-a0cf-9b7a7d1e7f10"
	fake.terminate = func(ids []string) ([]string, []engine.TerminateError) {
		return ids[:1], []engine.TerminateError{{Job: ids[1], Message: "fixture: no such job"}}
	}
	body := fmt.Sprintf(`{"jobs":["bad id!","%s","%s","%s"],"reason":"cleanup"}`, jobID, testBase.ServiceJob(other), testBase.JobQueue("HQ"))
	r := do(t, srv, "POST", "/v1/terminateservicejobs", body)
	want := `{"successful":["` + jobID + `"],"errors":[` +
		`{"job":"bad id!","code":"ValidationException","message":"\"bad id!\" is not a service job ID or ARN"},` +
		`{"job":"` + testBase.JobQueue("HQ") + `","code":"ValidationException","message":"\"` + testBase.JobQueue("HQ") + `\" is not a service job ID or ARN"},` +
		`{"job":"` + other + `","code":"ClientException","message":"fixture: no such job"}]}`
	if r.status != 200 || r.body != want {
		t.Errorf("got %d %s\nwant %s", r.status, r.body, want)
	}
	if got := fake.last(t).in.([]string); fmt.Sprint(got) != fmt.Sprint([]string{jobID, other, "cleanup"}) {
		t.Errorf("engine got %v", got)
	}

	fake.reset()
	r = do(t, srv, "POST", "/v1/terminateservicejobs", `{"jobs":["?"],"reason":"x"}`)
	if r.status != 200 || r.body != `{"successful":[],"errors":[{"job":"?","code":"ValidationException","message":"\"?\" is not a service job ID or ARN"}]}` {
		t.Errorf("all bad: %d %s", r.status, r.body)
	}
	if fake.called() != 0 {
		t.Error("the engine was called with no valid job")
	}
	r = do(t, srv, "POST", "/v1/terminateservicejobs", `{"jobs":[`+strings.Repeat(`"j",`, 50)+`"j"],"reason":"x"}`)
	wantRawError(t, r, 400, "ClientException", "jobs must have at most 50 entries, not 51")
}

// Ensure a request body over the limit is refused before it is decoded.
func TestMaxRequestBytes(t *testing.T) {
	fake := &fakeEngine{}
	opts := testOptions(t)
	opts.MaxRequestBytes = 64
	srv := serve(t, newServer(fake, opts))
	r := do(t, srv, "POST", "/v1/createjobqueue", `{"jobQueueName":"`+strings.Repeat("q", 64)+`"}`)
	wantRawError(t, r, 400, "ClientException", "The CreateJobQueue request exceeds the maximum size of 64 bytes")
	r = do(t, srv, "POST", "/v1/deletejobqueue", `{"jobQueue":"HQ"}`)
	if r.status != 200 {
		t.Errorf("small request: %d %s", r.status, r.body)
	}
}

// Ensure engine errors reach every operation's client as AWS errors: the
// client-facing codes as ClientException with the engine's message,
// anything else as ServerException "internal error". The fake engine fails
// every operation with each kind of error, which the real one cannot be
// made to do (a store's I/O error, an unwrapped error); the messages here
// are the fixture's, the engine's own are checked in texts_test.go.
func TestEngineErrors(t *testing.T) {
	srv, fake := newFakeServer(t)
	client := sdkClient(srv)
	for _, tt := range []struct {
		err  error
		want func(t *testing.T, err error)
	}{
		{&engine.Error{Code: engine.Conflict, Message: "Object already exists"}, clientExceptionIs("Object already exists")},
		{fmt.Errorf("wrapped: %w", &engine.Error{Code: engine.NotFound, Message: "Quota share QS1 does not exist"}), clientExceptionIs("Quota share QS1 does not exist")},
		{&engine.Error{Code: engine.Invalid, Message: "Invalid nextToken", Err: errors.New("bad base64")}, clientExceptionIs("Invalid nextToken")},
		{&engine.Error{Code: engine.Internal, Message: "store: disk I/O error"}, serverExceptionIs},
		{errors.New("database is locked"), serverExceptionIs},
	} {
		fake.err = tt.err
		for name, call := range successCalls() {
			t.Run(fmt.Sprint(tt.err)+"/"+name, func(t *testing.T) {
				tt.want(t, call(t.Context(), client))
			})
		}
	}
}

func clientExceptionIs(msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var ce *types.ClientException
		if !errors.As(err, &ce) || ce.ErrorMessage() != msg {
			t.Errorf("got %v, want ClientException %q", err, msg)
		}
	}
}

func serverExceptionIs(t *testing.T, err error) {
	t.Helper()
	var se *types.ServerException
	if !errors.As(err, &se) || se.ErrorMessage() != "internal error" {
		t.Errorf("got %v, want ServerException %q", err, "internal error")
	}
}

// Ensure a panic in an operation answers ServerException and leaves the
// server serving. The fake engine panics on demand; the real one has no
// way to be made to.
func TestPanicIsServerException(t *testing.T) {
	srv, fake := newFakeServer(t)
	fake.panics = true
	r := do(t, srv, "POST", "/v1/deletejobqueue", `{"jobQueue":"HQ"}`)
	wantRawError(t, r, 500, "ServerException", "internal error")
	fake.panics = false
	if r := do(t, srv, "POST", "/v1/deletejobqueue", `{"jobQueue":"HQ"}`); r.status != 200 {
		t.Errorf("after a panic: %d %s", r.status, r.body)
	}
}

// readAll reads the whole body whatever its declared length says, as
// io.ReadAll does, in bodies read a byte at a time too.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("x", 700)
	for _, declared := range []int64{-1, 0, 1, 699, 700, 701, 5000} {
		for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body))} {
			got, err := readAll(r, declared, 1000)
			if err != nil || string(got) != body {
				t.Errorf("declared %d: %d bytes, err %v", declared, len(got), err)
			}
		}
	}
}
