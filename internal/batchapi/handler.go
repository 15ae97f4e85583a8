package batchapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// Options configures the handler.
type Options struct {
	// Region and AccountID are those of the engine's ARNs (defaults
	// us-east-1 and 000000000000, as the engine's); the handler uses them to
	// recognise its own service-job ARNs where a job ID is expected.
	Region    string
	AccountID string
	// Logger receives one Debug line per request and the causes of
	// ServerExceptions. Default: discard.
	Logger *slog.Logger
	// MaxRequestBytes caps a request body (default 1 MiB). SubmitServiceJob
	// has AWS's own cap of 30 KiB whatever this is.
	MaxRequestBytes int64
	// Authorizer is asked once per operation whether the caller (the
	// access.Identity in the request's context) may perform it. Default:
	// access.AllowAll.
	Authorizer access.Authorizer
	// ServesS3 is set when the server serves S3 itself: a submission's S3
	// URIs are then authorized for its caller too (s3:GetObject and
	// s3:ListBucket on its channels, s3:PutObject on its output path,
	// all three on its checkpoints), as the caller's own S3 calls are.
	ServesS3 bool
}

func (o *Options) setDefaults() {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.AccountID == "" {
		o.AccountID = "000000000000"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 1 << 20
	}
	if o.Authorizer == nil {
		o.Authorizer = access.AllowAll{}
	}
}

// backend is the engine as the handler uses it; tests substitute a fake to
// check the wire shapes without a store.
type backend interface {
	CreateSchedulingPolicy(context.Context, batchmodel.CreateSchedulingPolicyInput) (record.SchedulingPolicy, error)
	UpdateSchedulingPolicy(context.Context, batchmodel.UpdateSchedulingPolicyInput) error
	DeleteSchedulingPolicy(ctx context.Context, arn string) error
	DescribeSchedulingPolicies(ctx context.Context, arns []string) ([]record.SchedulingPolicy, error)
	ListSchedulingPolicies(context.Context, batchmodel.Page) ([]record.SchedulingPolicy, string, error)
	CreateServiceEnvironment(context.Context, batchmodel.CreateServiceEnvironmentInput) (record.ServiceEnvironment, error)
	UpdateServiceEnvironment(context.Context, batchmodel.UpdateServiceEnvironmentInput) (record.ServiceEnvironment, error)
	DeleteServiceEnvironment(ctx context.Context, nameOrArn string) error
	DescribeServiceEnvironments(ctx context.Context, namesOrArns []string, p batchmodel.Page) ([]record.ServiceEnvironment, string, error)
	CreateJobQueue(context.Context, batchmodel.CreateJobQueueInput) (record.JobQueue, error)
	UpdateJobQueue(context.Context, batchmodel.UpdateJobQueueInput) (record.JobQueue, error)
	DeleteJobQueue(ctx context.Context, nameOrArn string) error
	DescribeJobQueues(ctx context.Context, namesOrArns []string, p batchmodel.Page) ([]record.JobQueue, string, error)
	CreateQuotaShare(context.Context, batchmodel.CreateQuotaShareInput) (record.QuotaShare, error)
	UpdateQuotaShare(context.Context, batchmodel.UpdateQuotaShareInput) (record.QuotaShare, error)
	DeleteQuotaShare(ctx context.Context, arn string) error
	DescribeQuotaShare(ctx context.Context, arn string) (record.QuotaShare, error)
	ListQuotaShares(ctx context.Context, jobQueue string, p batchmodel.Page) ([]record.QuotaShare, string, error)
	SubmitServiceJob(context.Context, engine.SubmitServiceJobInput) (record.Job, error)
	UpdateServiceJob(ctx context.Context, jobID string, priority int) (record.Job, error)
	TerminateServiceJob(ctx context.Context, jobID, reason string) error
	TerminateServiceJobs(ctx context.Context, jobIDs []string, reason string) ([]string, []engine.TerminateError, error)
	DescribeServiceJob(ctx context.Context, jobID string) (record.Job, error)
	ListServiceJobs(context.Context, engine.ListServiceJobsInput) ([]record.Job, string, error)
	GetJobQueueSnapshot(ctx context.Context, jobQueue string) (engine.QueueSnapshot, error)
	TagResource(ctx context.Context, arn string, tags map[string]string) error
	UntagResource(ctx context.Context, arn string, keys []string) error
	ListTagsForResource(ctx context.Context, arn string) (map[string]string, error)
}

var _ backend = (*engine.Engine)(nil)

// New returns the AWS Batch API handler in front of eng.
func New(eng *engine.Engine, opts Options) *Handler {
	return newServer(eng, opts)
}

func newServer(b backend, opts Options) *Handler {
	opts.setDefaults()
	return &Handler{
		eng:  b,
		opts: opts,
		base: arn.NewBase(opts.Region, opts.AccountID),
		log:  opts.Logger,
	}
}

// Handler serves the AWS Batch API at /v1/. Its exported methods are the
// operations that other routes share (the console's job writes): each
// checks its input, authorizes the caller and calls the engine, exactly as
// the API's own route does.
type Handler struct {
	eng  backend
	opts Options
	base arn.Base
	log  *slog.Logger
}

// authorize asks whether the caller in ctx may perform action on
// resource. Every operation calls it once, after checking its input and
// before calling the engine.
func (s *Handler) authorize(ctx context.Context, action, resource string) error {
	return s.opts.Authorizer.Authorize(ctx, access.Caller(ctx), action, resource)
}

// operation is one API operation: how it is reached and what it does.
type operation struct {
	name    string // AWS's name, for logs and messages
	method  string
	maxBody int64 // 0: Options.MaxRequestBytes
	// run decodes, checks, calls the engine and returns the output to
	// encode (noBody for an empty 200).
	run func(s *Handler, r *http.Request, body []byte) (any, error)
}

// fastDecoder is an input that can read its usual bodies without
// reflection; decodeJSON reads the others.
type fastDecoder interface{ decodeFast(body []byte) bool }

// noBody is the output of operations that answer 200 with an empty body.
type noBody struct{}

// jsonOp makes an operation whose input is the JSON body decoded into In.
func jsonOp[In any](name string, fn func(*Handler, context.Context, *In) (any, error)) operation {
	return operation{name: name, method: http.MethodPost, run: func(s *Handler, r *http.Request, body []byte) (any, error) {
		var in In
		if f, ok := any(&in).(fastDecoder); ok && f.decodeFast(body) {
			return fn(s, r.Context(), &in)
		}
		var zero In
		in = zero // what a partial fast read left
		if err := decodeJSON(body, &in); err != nil {
			return nil, err
		}
		return fn(s, r.Context(), &in)
	}}
}

func (op operation) withMaxBody(n int64) operation {
	op.maxBody = n
	return op
}

// operations maps /v1/<lowercased name> to each body-only operation.
var operations = indexByPath(
	jsonOp("CreateSchedulingPolicy", (*Handler).createSchedulingPolicy),
	jsonOp("UpdateSchedulingPolicy", (*Handler).updateSchedulingPolicy),
	jsonOp("DeleteSchedulingPolicy", (*Handler).deleteSchedulingPolicy),
	jsonOp("DescribeSchedulingPolicies", (*Handler).describeSchedulingPolicies),
	jsonOp("ListSchedulingPolicies", (*Handler).listSchedulingPolicies),
	jsonOp("CreateServiceEnvironment", (*Handler).createServiceEnvironment),
	jsonOp("UpdateServiceEnvironment", (*Handler).updateServiceEnvironment),
	jsonOp("DeleteServiceEnvironment", (*Handler).deleteServiceEnvironment),
	jsonOp("DescribeServiceEnvironments", (*Handler).describeServiceEnvironments),
	jsonOp("CreateJobQueue", (*Handler).createJobQueue),
	jsonOp("UpdateJobQueue", (*Handler).updateJobQueue),
	jsonOp("DeleteJobQueue", (*Handler).deleteJobQueue),
	jsonOp("DescribeJobQueues", (*Handler).describeJobQueues),
	jsonOp("CreateQuotaShare", (*Handler).createQuotaShare),
	jsonOp("UpdateQuotaShare", (*Handler).updateQuotaShare),
	jsonOp("DeleteQuotaShare", (*Handler).deleteQuotaShare),
	jsonOp("DescribeQuotaShare", (*Handler).describeQuotaShare),
	jsonOp("ListQuotaShares", (*Handler).listQuotaShares),
	jsonOp("SubmitServiceJob", (*Handler).submitServiceJob).withMaxBody(maxSubmitBytes),
	jsonOp("UpdateServiceJob", (*Handler).updateServiceJob),
	jsonOp("TerminateServiceJob", (*Handler).terminateServiceJob),
	jsonOp("TerminateServiceJobs", (*Handler).terminateServiceJobs),
	jsonOp("DescribeServiceJob", (*Handler).describeServiceJob),
	jsonOp("ListServiceJobs", (*Handler).listServiceJobs),
	jsonOp("GetJobQueueSnapshot", (*Handler).getJobQueueSnapshot),
)

func indexByPath(ops ...operation) map[string]operation {
	m := make(map[string]operation, len(ops))
	for _, op := range ops {
		m["/v1/"+strings.ToLower(op.name)] = op
	}
	return m
}

// tagsPrefix starts the path of the tag operations, which take the
// resource ARN as one percent-encoded path segment.
const tagsPrefix = "/v1/tags/"

// tagOperations are the operations on tagsPrefix, by method.
var tagOperations = map[string]operation{
	http.MethodPost:   {name: "TagResource", method: http.MethodPost, run: (*Handler).tagResource},
	http.MethodGet:    {name: "ListTagsForResource", method: http.MethodGet, run: (*Handler).listTagsForResource},
	http.MethodDelete: {name: "UntagResource", method: http.MethodDelete, run: (*Handler).untagResource},
}

// Route is how an operation is reached.
type Route struct {
	Operation string // AWS's name, e.g. SubmitServiceJob
	Method    string
	Path      string // the tag operations' is /v1/tags/{resourceArn}
}

// Routes lists every operation the handler serves, by path and method.
func Routes() []Route {
	var out []Route
	for path, op := range operations {
		out = append(out, Route{op.name, op.method, path})
	}
	for _, op := range tagOperations {
		out = append(out, Route{op.name, op.method, tagsPrefix + "{resourceArn}"})
	}
	slices.SortFunc(out, func(a, b Route) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method)) })
	return out
}

// route finds the request's operation. It routes on the escaped path:
// r.URL.Path has already turned the ARN's %2F into '/'.
func route(r *http.Request) (operation, error) {
	path := r.URL.EscapedPath()
	if strings.HasPrefix(path, tagsPrefix) {
		op, ok := tagOperations[r.Method]
		if !ok {
			return operation{}, methodNotAllowed(r.Method, path, "GET, POST, DELETE")
		}
		return op, nil
	}
	op, ok := operations[path]
	if !ok {
		return operation{}, &apiError{status: http.StatusNotFound, code: clientException,
			message: fmt.Sprintf("No operation at %s %s", r.Method, path)}
	}
	if r.Method != op.method {
		return operation{}, methodNotAllowed(r.Method, path, op.method)
	}
	return op, nil
}

func methodNotAllowed(method, path, allow string) *apiError {
	return &apiError{status: http.StatusMethodNotAllowed, code: clientException, allow: allow,
		message: fmt.Sprintf("Method %s is not allowed on %s; use %s", method, path, allow)}
}

func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := uuid.NewString()
	// Set directly, not through Header().Set, to keep AWS's spelling.
	w.Header()["x-amzn-RequestId"] = []string{id}
	op, out, err := s.serve(r)
	status := http.StatusOK
	if err != nil {
		status = s.writeError(w, op.name, id, err)
	} else {
		s.writeOutput(w, op.name, id, out)
	}
	s.log.Debug("request", "op", op.name, "method", r.Method, "path", r.URL.EscapedPath(),
		"status", status, "request_id", id, "duration", time.Since(start))
}

// serve routes, reads and runs the request. A panic in an operation
// becomes a ServerException; the server carries on.
func (s *Handler) serve(r *http.Request) (op operation, out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	op, err = route(r)
	if err != nil {
		return op, nil, err
	}
	body, err := s.readBody(r, op)
	if err != nil {
		return op, nil, err
	}
	out, err = op.run(s, r, body)
	return op, out, err
}

func (s *Handler) readBody(r *http.Request, op operation) ([]byte, error) {
	limit := op.maxBody
	if limit == 0 {
		limit = s.opts.MaxRequestBytes
	}
	body, err := readAll(io.LimitReader(r.Body, limit+1), r.ContentLength, limit)
	if err != nil {
		return nil, clientErrorf("Unable to read the request body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, clientErrorf("The %s request exceeds the maximum size of %d bytes", op.name, limit)
	}
	return body, nil
}

// readAll is io.ReadAll into a buffer of the declared length (and one
// byte more, to see the end), so a body is read without regrowing. A
// length unknown or over the limit reads as io.ReadAll does.
func readAll(r io.Reader, length, limit int64) ([]byte, error) {
	if length < 0 || length > limit {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, length+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than declared: let append grow it
		}
	}
}

// decodeJSON decodes a request body into v. An empty body is an empty
// object; unknown members are ignored, since clients may be newer.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	err := json.Unmarshal(body, v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syn):
		return clientErrorf("The request body is not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		// Field names the member, or the list or map holding the value.
		return clientErrorf("Invalid value for %s: expected %s, got %s", typ.Field, jsonType(typ.Type.Kind().String()), article(typ.Value))
	case errors.As(err, &typ):
		return clientErrorf("The request body must be a JSON object, not %s", article(typ.Value))
	}
	return clientErrorf("The request body is not valid JSON: %v", err)
}

// writeOutput encodes out as the 200 response.
func (s *Handler) writeOutput(w http.ResponseWriter, op, id string, out any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if _, ok := out.(noBody); ok {
		h.Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	body, ok := plainOutput(out)
	if !ok {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			s.writeError(w, op, id, fmt.Errorf("encode %s output: %w", op, err))
			return
		}
		body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
