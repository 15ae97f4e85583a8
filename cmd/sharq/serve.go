package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/local"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"github.com/sharq-dev/sharq/internal/metrics"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/web"
)

type serveConfig struct {
	listen    string
	dataDir   string
	region    string
	accountID string
	executor  string
	maxShares int
	retention time.Duration
	grace     time.Duration
	logLevel  string
	// supervisor is the local executor's supervisor program (empty: this
	// binary).
	supervisor string
	auth       authConfig
	// tlsCert and tlsKey, when set, make the server speak HTTPS.
	tlsCert, tlsKey string
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:8080", "address to serve the API on")
	fs.StringVar(&cfg.dataDir, "data-dir", "./sharq-data", "directory for the database, job logs and checkpoints")
	fs.StringVar(&cfg.region, "region", "us-east-1", "region in ARNs")
	fs.StringVar(&cfg.accountID, "account-id", "000000000000", "account ID in ARNs")
	fs.StringVar(&cfg.executor, "executor", "local", "how jobs run: local (processes on this machine) or simulated (sleep for the payload's runtime)")
	fs.IntVar(&cfg.maxShares, "max-shares-per-queue", 20, "quota shares allowed per job queue")
	fs.DurationVar(&cfg.retention, "retention", 7*24*time.Hour, "how long ended jobs are kept")
	fs.DurationVar(&cfg.grace, "stop-grace", 120*time.Second, "time a stopped job gets between SIGTERM and SIGKILL")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&cfg.supervisor, "supervisor", "", "local executor: the program that supervises each attempt, run as PROGRAM "+local.SupervisorArg+" DIR (default: this binary; sharq-supervise starts faster)")
	cfg.auth.register(fs)
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; reloaded on SIGHUP)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		fmt.Fprintf(stderr, "sharq serve: bad --log-level: %v\n", err)
		return 2
	}
	log := newLogger(stderr, level)
	if err := serve(ctx, cfg, log); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

func openExecutor(cfg serveConfig, log *slog.Logger) (executor.Executor, error) {
	switch cfg.executor {
	case "local":
		opts := local.Options{DataDir: filepath.Join(cfg.dataDir, "executor"), DefaultGrace: cfg.grace, Logger: log}
		if cfg.supervisor != "" {
			// Supervisors run in their attempt's directory: the path must be
			// absolute.
			path, err := filepath.Abs(cfg.supervisor)
			if err == nil {
				_, err = exec.LookPath(path)
			}
			if err != nil {
				return nil, fmt.Errorf("--supervisor: %w", err)
			}
			opts.SupervisorCommand = []string{path, local.SupervisorArg}
		}
		return local.New(opts)
	case "simulated":
		return simulated.New(), nil
	}
	return nil, fmt.Errorf("unknown executor %q (want local or simulated)", cfg.executor)
}

func serve(ctx context.Context, cfg serveConfig, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(filepath.Join(cfg.dataDir, "sharq.db"))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	g, err := openGate(ctx, cfg, st.Keys(), log)
	if err != nil {
		return err
	}
	ex, err := openExecutor(cfg, log)
	if err != nil {
		return fmt.Errorf("open executor: %w", err)
	}
	defer ex.Close()
	start := time.Now()
	s, err := newServer(ctx, cfg, st, st.Keys(), ex, log, g)
	if err != nil {
		return err
	}
	g.setEngine(s.eng)
	log.Info("state loaded", "took", time.Since(start).Round(time.Millisecond))

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if cfg.tlsCert != "" || cfg.tlsKey != "" {
		if cfg.tlsCert == "" || cfg.tlsKey == "" {
			return errors.New("--tls-cert and --tls-key go together")
		}
		certs, err := newCertReloader(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return err
		}
		srv.TLSConfig = certs.config()
		go certs.reloadOnHUP(runCtx, log)
		scheme = "https"
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Open console streams and event followers would otherwise hold
	// Shutdown up.
	for _, c := range s.closers {
		srv.RegisterOnShutdown(c)
	}
	go s.audit.Run(runCtx)
	defer func() { cancel(); s.audit.Wait() }() // the last entries are written
	engDone := make(chan error, 1)
	go func() { engDone <- s.eng.Run(runCtx) }()
	srvDone := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			srvDone <- srv.ServeTLS(ln, "", "")
			return
		}
		srvDone <- srv.Serve(ln)
	}()
	log.Info("serving", "addr", ln.Addr().String(), "scheme", scheme, "data_dir", cfg.dataDir, "executor", cfg.executor)

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-engDone:
		engDone <- runErr
	case runErr = <-srvDone:
	}
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
	}
	cancel()
	if err := <-engDone; err != nil && runErr == nil {
		runErr = err
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	log.Info("stopped")
	return runErr
}

// server is the engine and the one request path in front of it.
type server struct {
	eng *engine.Engine
	// handler authenticates every request (access.Middleware), then
	// serves it from mux.
	handler http.Handler
	mux     *routes
	// closers end long-lived answers (console streams, event followers)
	// when the server shuts down.
	closers []func()
	// audit records every mutating call; its Run writes them down.
	audit *access.Auditor
}

// accessStore keeps access keys, policies and the audit log.
type accessStore interface {
	access.KeyStore
	access.AuditStore
}

// newServer builds the engine over st and ex, and every route on one mux
// behind the middleware: the AWS Batch API at /v1/, sharq's own routes and
// the console under /sharq/v1/ and /, /metrics and /healthz. Every route
// that reads or changes data asks authz; see package access.
func newServer(ctx context.Context, cfg serveConfig, st store.Store, keys accessStore, ex executor.Executor, log *slog.Logger,
	g accessGate) (*server, error) {
	audit := access.NewAuditor(keys, log)
	authn, authz := g.authn, audit.Authorizer(g.authz)
	met := metrics.New()
	console := web.New(web.Options{Logger: log, Region: cfg.region, AccountID: cfg.accountID, Authorizer: authz})
	eng, err := engine.New(ctx, engine.Options{
		Region: cfg.region, AccountID: cfg.accountID, Store: st, Executor: ex, Logger: log,
		MaxSharesPerQueue: cfg.maxShares, Retention: cfg.retention, StopGrace: cfg.grace,
		Observers: []engine.Observer{met, console, metrics.TransitionLogger{Log: log}},
	})
	if err != nil {
		return nil, fmt.Errorf("start engine: %w", err)
	}
	api := batchapi.New(eng, batchapi.Options{Region: cfg.region, AccountID: cfg.accountID, Logger: log, Authorizer: authz})
	sharq := sharqapi.New(eng, sharqapi.Options{Logs: logSource(ex), Logger: log,
		Region: cfg.region, AccountID: cfg.accountID, Authorizer: authz, Keys: g.keyring.Store(), Audit: keys, Keyring: g.keyring})
	met.Watch(eng)

	mux := &routes{ServeMux: http.NewServeMux()}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.Handle("GET /metrics", authorized(authz, access.ActionGetMetrics, met.Handler(), log))
	mux.Handle("/v1/", met.API(api))
	sharq.Mount(mux)
	console.Mount(mux, eng, api)
	return &server{
		eng: eng,
		handler: access.Middleware(audit.Middleware(mux), authn, func(w http.ResponseWriter, r *http.Request, err error) {
			api.WriteError(w, r, err)
			audit.Refused(w, r, err)
		}),
		audit:   audit,
		mux:     mux,
		closers: []func(){console.Close, sharq.Close},
	}, nil
}

// authorized serves h to the callers authz allows action on any resource.
func authorized(authz access.Authorizer, action string, h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := authz.Authorize(r.Context(), access.Caller(r.Context()), action, access.AnyResource); err != nil {
			jsonhttp.EngineError(w, log, action, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// routes is the server's mux; it remembers each pattern registered, so
// that a test can reach every route.
type routes struct {
	*http.ServeMux
	patterns []string
}

func (m *routes) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routes) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

// logSource is the executor's job logs, nil when it keeps none.
func logSource(ex executor.Executor) executor.LogReader {
	if l, ok := ex.(executor.LogReader); ok {
		return l
	}
	return nil
}
