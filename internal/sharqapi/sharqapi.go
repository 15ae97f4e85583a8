// Package sharqapi serves what sharq tells beyond the AWS Batch API, under
// /sharq/v1/: share usage split into own, borrowed, lent and idle capacity;
// where waiting jobs stand in their share and why; a job's state changes;
// a stream of state-change events; job logs; and what a submission would do
// now. The sharq CLI and the console read it; it only reads the engine and
// never changes anything.
//
//	GET  /sharq/v1/shares                 Usage
//	POST /sharq/v1/jobs/positions         PositionsRequest -> Positions
//	GET  /sharq/v1/jobs/{job}/events      JobEvents
//	GET  /sharq/v1/jobs/{job}/logs        raw log bytes (see the Header* constants)
//	GET  /sharq/v1/events                 JSON lines of engine.JobEvent
//	POST /sharq/v1/dryrun                 SubmitRequest -> engine.DryRun (errors in AWS's shape)
//
// {job} is a job ID or a service-job ARN. Errors answer 400, 404, 501 or
// 500 with an Error body.
package sharqapi

import (
	"context"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"log/slog"
	"net/http"
	"sync"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/engine"
)

// Engine is what the handler reads; *engine.Engine implements it.
type Engine interface {
	Shares() []engine.ShareState
	EnvUsage(name string) []core.UnitUsage
	StatusCounts() map[string]int
	DescribeJobQueues(ctx context.Context, namesOrArns []string, p engine.Page) ([]engine.JobQueue, string, error)
	DescribeServiceJob(ctx context.Context, id string) (engine.ServiceJob, error)
	JobPosition(id string) (core.JobStatus, bool)
	JobEvents(id string) ([]engine.JobEvent, error)
	RecentEvents() []engine.JobEvent
	Subscribe(buf int) (<-chan engine.JobEvent, func())
	DryRunSubmit(ctx context.Context, in engine.SubmitServiceJobInput) (engine.DryRun, error)
}

// LogSource finds an attempt's log directory, holding <host>.stdout and
// <host>.stderr; the local executor implements it.
type LogSource interface {
	LogPath(attemptID string) (dir string, ok bool)
}

// Options configures the handler.
type Options struct {
	// Logs serves job logs; nil when the executor keeps none (simulated).
	Logs LogSource
	// Logger receives the causes of 500 answers. Default: discard.
	Logger *slog.Logger
}

// Handler serves the sharq-specific routes.
type Handler struct {
	eng  Engine
	opts Options
	mux  *http.ServeMux

	// closing ends event streams when the server shuts down, so that
	// http.Server.Shutdown does not wait for followers that never leave.
	closeOnce sync.Once
	closing   chan struct{}
}

// New returns the handler; mount it at /sharq/v1/.
func New(eng Engine, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{eng: eng, opts: opts, mux: http.NewServeMux(), closing: make(chan struct{})}
	h.mux.HandleFunc("GET /sharq/v1/shares", h.shares)
	h.mux.HandleFunc("POST /sharq/v1/jobs/positions", h.positions)
	h.mux.HandleFunc("GET /sharq/v1/jobs/{job}/events", h.jobEvents)
	h.mux.HandleFunc("GET /sharq/v1/jobs/{job}/logs", h.logs)
	h.mux.HandleFunc("GET /sharq/v1/events", h.events)
	h.mux.HandleFunc("POST "+DryRunPath, h.dryRun)
	h.mux.HandleFunc("/sharq/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such sharq route: "+r.Method+" "+r.URL.Path)
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close ends the event streams being served; register it with
// http.Server.RegisterOnShutdown.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.closing) }) }

func writeJSON(w http.ResponseWriter, v any) { jsonhttp.Write(w, v) }

func writeError(w http.ResponseWriter, status int, msg string) { jsonhttp.WriteError(w, status, msg) }

func (h *Handler) engineError(w http.ResponseWriter, err error) {
	jsonhttp.EngineError(w, h.opts.Logger, "sharq api", err)
}
