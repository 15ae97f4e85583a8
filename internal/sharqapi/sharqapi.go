// Package sharqapi serves what sharq tells beyond the AWS Batch API, under
// /sharq/v1/: share usage split into own, borrowed, lent and idle capacity;
// where waiting jobs stand in their share and why; a job's state changes;
// a stream of state-change events; job logs; and what a submission would do
// now. The sharq CLI and the console read it; it only reads the engine and
// never changes anything. It also keeps the access policies (Options.Keys).
//
//	GET  /sharq/v1/shares                 Usage
//	POST /sharq/v1/jobs/positions         PositionsRequest -> Positions
//	GET  /sharq/v1/estimates[?since=MS]   Estimates: every waiting job's estimated start
//	GET  /sharq/v1/jobs/match?id=PART     Matches: the jobs whose ID begins or ends with PART
//	GET  /sharq/v1/jobs/{job}/events      JobEvents
//	GET  /sharq/v1/jobs/{job}/logs        raw log bytes (see the Header* constants)
//	GET  /sharq/v1/events                 JSON lines of batchapi.Event
//	POST /sharq/v1/dryrun                 SubmitRequest -> engine.DryRun (errors in AWS's shape)
//	GET  /sharq/v1/whoami                 Caller: the principal the caller's jobs record as owner
//	GET  /sharq/v1/usage?by=&since=&every= UsageReport: capacity used, borrowed, lent and preempted over time
//	GET  /sharq/v1/access/policies        []AccessPolicy
//	PUT  /sharq/v1/access/policies/{name} access.PolicyDocument -> AccessPolicy
//	GET  /sharq/v1/audit                  JSON lines of access.AuditEntry
//	GET  /sharq/v1/access/keys            []AccessKey
//	POST /sharq/v1/access/keys            CreateKeyRequest -> AccessKey (with its secret, once)
//	POST /sharq/v1/access/keys/{id}/disable, /enable; DELETE /sharq/v1/access/keys/{id}
//
// {job} is a job ID or a service-job ARN. Errors answer 400, 403, 404, 501
// or 500 with an Error body.
//
// Every route asks Options.Authorizer once whether the caller (the
// access.Identity in the request's context) may perform its sharq: action
// on its resource, before it reads anything; package access lists them.
package sharqapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/usage"
)

// Engine is what the handler reads; *engine.Engine implements it. The
// views of the scheduler's state come from the read model.
type Engine interface {
	readmodel.Engine
	SetQuotaShareMinimumRuntime(ctx context.Context, shareArn string, seconds int) (record.QuotaShare, error)
	DescribeServiceJob(ctx context.Context, id string) (record.Job, error)
	MatchJobIDs(fragment string, limit int) []string
	JobEvents(id string) ([]jobevents.Event, error)
	RecentEvents() []jobevents.Event
	Subscribe(buf int) (<-chan jobevents.Event, func())
	DryRunSubmit(ctx context.Context, in engine.SubmitServiceJobInput) (engine.DryRun, error)
	Usage(ctx context.Context, q usage.Query) (usage.Query, []usage.Row, error)
}

// Options configures the handler.
type Options struct {
	// Logs serves job logs; nil when the executor keeps none (simulated).
	Logs executor.LogReader
	// Logger receives the causes of 500 answers. Default: discard.
	Logger *slog.Logger
	// Region and AccountID are those of the engine's ARNs (defaults
	// us-east-1 and 000000000000, as the engine's): routes are authorized
	// on the ARNs of the jobs, queues and shares they read.
	Region    string
	AccountID string
	// Authorizer is asked once per request whether the caller may perform
	// the route's action. Default: access.AllowAll.
	Authorizer access.Authorizer
	// Keys keeps the access policies; nil serves no policy routes.
	Keys access.KeyStore
	// Audit is the audit log; nil serves no audit route.
	Audit access.AuditStore
	// Keyring issues and changes access keys; nil serves no key routes.
	Keyring *access.Keyring
}

// Mux is where routes are registered; *http.ServeMux is one.
type Mux interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// Handler serves the sharq-specific routes.
type Handler struct {
	eng  Engine
	opts Options
	base arn.Base
	mux  *http.ServeMux

	// closing ends event streams when the server shuts down, so that
	// http.Server.Shutdown does not wait for followers that never leave.
	closeOnce sync.Once
	closing   chan struct{}
}

// New returns the handler. Register its routes on the server's mux with
// Mount, or serve it as it is at /sharq/v1/.
func New(eng Engine, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = "000000000000"
	}
	if opts.Authorizer == nil {
		opts.Authorizer = access.AllowAll{}
	}
	h := &Handler{eng: eng, opts: opts, base: arn.NewBase(opts.Region, opts.AccountID), mux: http.NewServeMux(), closing: make(chan struct{})}
	h.Mount(h.mux)
	return h
}

// Mount registers the routes on mux, including a JSON 404 for any other
// path under /sharq/v1/.
func (h *Handler) Mount(mux Mux) {
	mux.HandleFunc("GET /sharq/v1/shares", h.shares)
	mux.HandleFunc("POST /sharq/v1/jobs/positions", h.positions)
	mux.HandleFunc("GET /sharq/v1/jobs/match", h.match)
	mux.HandleFunc("GET "+EstimatesPath, h.estimates)
	mux.HandleFunc("GET /sharq/v1/jobs/{job}/events", h.jobEvents)
	mux.HandleFunc("GET /sharq/v1/jobs/{job}/logs", h.logs)
	mux.HandleFunc("GET /sharq/v1/events", h.events)
	mux.HandleFunc("POST "+DryRunPath, h.dryRun)
	mux.HandleFunc("GET "+WhoAmIPath, h.whoami)
	mux.HandleFunc("PUT "+ShareSettingsPath("{queue}", "{share}"), h.putShareSettings)
	mux.HandleFunc("GET "+UsagePath, h.usageHistory)
	if h.opts.Keyring != nil {
		h.mountKeys(mux)
	}
	if h.opts.Audit != nil {
		mux.HandleFunc("GET "+AuditPath, h.audit)
	}
	if h.opts.Keys != nil {
		mux.HandleFunc("GET "+PoliciesPath, h.listPolicies)
		mux.HandleFunc("PUT "+PoliciesPath+"/{name}", h.putPolicy)
	}
	mux.HandleFunc("/sharq/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such sharq route: "+r.Method+" "+r.URL.Path)
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close ends the event streams being served; register it with
// http.Server.RegisterOnShutdown.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.closing) }) }

// authorize asks whether the caller of r may perform action on resource;
// when not, it answers the refusal (403) and returns false.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, action, resource string) bool {
	err := h.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), action, resource)
	if err != nil {
		h.engineError(w, err)
		return false
	}
	return true
}

// jobARN is the ARN of the job a path names by ID or ARN.
func (h *Handler) jobARN(r *http.Request) string {
	return h.base.Of(arn.ServiceJob, r.PathValue("job"))
}

func writeJSON(w http.ResponseWriter, v any) { jsonhttp.Write(w, v) }

func writeError(w http.ResponseWriter, status int, msg string) { jsonhttp.WriteError(w, status, msg) }

func (h *Handler) engineError(w http.ResponseWriter, err error) {
	jsonhttp.EngineError(w, h.opts.Logger, "sharq api", err)
}
