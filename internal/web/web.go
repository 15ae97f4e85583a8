// Package web is sharq's console: a page served at / that shows each quota
// share's capacity as stacked bars (own, borrowed, lent, idle), the front of
// each share's queue with positions and waiting reasons, the jobs holding
// capacity and the latest state changes, all kept current by server-sent
// events; and a page per job with its attempts, preemptions, state changes
// and logs (and, with the kube executor, each attempt's pods and their
// nodes), where its priority can be changed and it can be terminated.
//
// The assets are embedded in the binary and use no network. Routes:
//
//	GET  /                                    the console
//	GET  /jobs/{job}                          a job's page
//	GET  /usage                               the usage history's page (it reads /sharq/v1/usage)
//	GET  /assets/...                          its scripts and styles
//	GET  /sharq/v1/stream                     server-sent events: "state" (State) and "job" (batchapi.Event)
//	GET  /sharq/v1/console/state              State, once
//	GET  /sharq/v1/console/jobs/{job}         JobDetail
//	POST /sharq/v1/jobs/{job}/priority        {"schedulingPriority": N} -> batchapi.ServiceJob
//	POST /sharq/v1/jobs/{job}/terminate       {"reason": "..."} -> {}
//
// The POST routes take only application/json: a page of another origin
// cannot send that without a CORS preflight, which the server never grants,
// so they cannot be driven from a foreign page in the user's browser. They
// are the AWS API's UpdateServiceJob and TerminateServiceJob (the
// JobOperations given to Mount): the same checks, the same authorization
// on the job, the same engine call.
//
// The data routes ask Options.Authorizer once per request whether the
// caller (the access.Identity in the request's context) may read what they
// show (package access lists the actions); the page and its assets hold no
// data and are not authorized. When the server answers that a request needs
// a signature, the page asks for an access key and signs with it in the
// browser (assets/sigv4.js): its requests in the Authorization header, its
// stream with a presigned URL, since EventSource sends no headers.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/readmodel"
	"github.com/sharq-dev/sharq/internal/record"
)

// Engine is what the console reads and changes; *engine.Engine implements
// it. The views of the scheduler's state come from the read model.
type Engine interface {
	readmodel.Engine
	ListServiceJobs(ctx context.Context, in engine.ListServiceJobsInput) ([]record.Job, string, error)
	GetJobQueueSnapshot(ctx context.Context, jobQueue string) (engine.QueueSnapshot, error)
	DescribeServiceJob(ctx context.Context, id string) (record.Job, error)
	JobEvents(id string) ([]jobevents.Event, error)
	RecentEvents() []jobevents.Event
	Subscribe(buf int) (<-chan jobevents.Event, func())
}

var _ Engine = (*engine.Engine)(nil)

// JobOperations are the job writes the console offers. *batchapi.Handler
// implements them: each checks its input, authorizes the caller on the job
// and calls the engine, as the API's UpdateServiceJob and
// TerminateServiceJob do.
type JobOperations interface {
	UpdateServiceJob(ctx context.Context, jobID string, priority *int) (batchapi.ServiceJob, error)
	TerminateServiceJob(ctx context.Context, jobID, reason string) error
}

// Mux is where routes are registered; *http.ServeMux is one.
type Mux interface {
	Handle(pattern string, handler http.Handler)
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// Options configures the console.
type Options struct {
	// Logger receives the causes of 500 answers. Default: discard.
	Logger *slog.Logger
	// Interval is the least time between two state pushes (default 250 ms:
	// at most four a second, however busy the scheduler).
	Interval time.Duration
	// FrontLength is how many waiting jobs of each share are shown
	// (default 10).
	FrontLength int
	// MaxOrdered is the most waiting jobs of one share that are listed and
	// ordered to find its front (default 200). The engine tells a share's
	// order only through each job's position, so ordering costs a listing
	// and a look-up per job; a share with more shows its head alone.
	MaxOrdered int
	// Region and AccountID are those of the engine's ARNs (defaults
	// us-east-1 and 000000000000, as the engine's): a job's page is
	// authorized on the job's ARN.
	Region    string
	AccountID string
	// Authorizer is asked once per data request whether the caller may
	// read it. Default: access.AllowAll.
	Authorizer access.Authorizer
	// Instances, when the executor can tell, says where each attempt's
	// instances run (the kube executor's pods and nodes); a job's page
	// shows them.
	Instances executor.InstanceLister
}

// Console serves the console. It is a jobevents.Observer: pass it in
// engine.Options.Observers so that it hears of each committed cycle, then
// Mount it once the engine exists.
type Console struct {
	opts Options
	eng  Engine
	jobs JobOperations
	base arn.Base
	log  *slog.Logger

	dirty     chan struct{} // a cycle was committed since the last push
	closing   chan struct{}
	closeOnce sync.Once
	hub       hub
}

// New returns a console not yet attached to an engine.
func New(opts Options) *Console {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.FrontLength <= 0 {
		opts.FrontLength = 10
	}
	if opts.MaxOrdered <= 0 {
		opts.MaxOrdered = 200
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
	return &Console{opts: opts, log: opts.Logger, base: arn.NewBase(opts.Region, opts.AccountID),
		dirty: make(chan struct{}, 1), closing: make(chan struct{}), hub: hub{clients: map[chan []byte]struct{}{}}}
}

// ObserveCycle notes that the engine committed a cycle. It never blocks
// the engine's loop: a pending note absorbs the next ones.
func (c *Console) ObserveCycle(time.Duration, []jobevents.Event, []jobevents.Dispatch, []jobevents.Preempt) {
	c.poke()
}

func (c *Console) poke() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}

// Mount attaches the console to eng, whose state it shows, and to jobs,
// which change jobs; it registers its routes on mux and starts the
// goroutine that pushes state to the open pages. Call Close when the
// server shuts down.
func (c *Console) Mount(mux Mux, eng Engine, jobs JobOperations) {
	c.eng, c.jobs = eng, jobs
	mux.HandleFunc("GET /{$}", serveIndex)
	mux.HandleFunc("GET /jobs/{job}", serveIndex)
	mux.HandleFunc("GET /usage", serveIndex)
	mux.Handle("GET /assets/", assetHandler())
	mux.HandleFunc("GET /sharq/v1/stream", c.stream)
	mux.HandleFunc("GET /sharq/v1/console/state", c.state)
	mux.HandleFunc("GET /sharq/v1/console/jobs/{job}", c.jobDetail)
	mux.HandleFunc("POST /sharq/v1/jobs/{job}/priority", c.setPriority)
	mux.HandleFunc("POST /sharq/v1/jobs/{job}/terminate", c.terminate)
	go c.pushLoop()
}

// Close ends the open streams and the push goroutine, so that
// http.Server.Shutdown does not wait for pages that never leave; register
// it with http.Server.RegisterOnShutdown.
func (c *Console) Close() { c.closeOnce.Do(func() { close(c.closing) }) }

// authorize asks whether the caller of r may perform action on resource;
// when not, it answers the refusal (403) and returns false.
func (c *Console) authorize(w http.ResponseWriter, r *http.Request, action, resource string) bool {
	err := c.opts.Authorizer.Authorize(r.Context(), access.Caller(r.Context()), action, resource)
	if err != nil {
		c.engineError(w, err)
		return false
	}
	return true
}
