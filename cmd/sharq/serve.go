package main

import (
	"cmp"
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/dirlock"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/local"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/jobevents"
	"github.com/sharq-dev/sharq/internal/jsonhttp"
	"github.com/sharq-dev/sharq/internal/logsapi"
	"github.com/sharq-dev/sharq/internal/metrics"
	"github.com/sharq-dev/sharq/internal/sagemakerapi"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	usagehist "github.com/sharq-dev/sharq/internal/usage"
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
	// usageRetention is how long usage history is kept (0: for ever).
	usageRetention time.Duration
	grace          time.Duration
	workers        int
	logLevel       string
	// supervisor is the local executor's supervisor program (empty: this
	// binary).
	supervisor string
	// store is a postgres:// URL for a store shared by several servers
	// (empty: the SQLite file in dataDir); advertise is where the others
	// reach this one when it leads, and leaseTTL how long its lease lasts
	// unrenewed.
	store     string
	advertise string
	leaseTTL  time.Duration
	// lease is the leadership this server holds, once it leads on a
	// shared store; nil on its own store.
	lease engine.Lease
	// s3 is the S3 service this server serves itself (nil: jobs use
	// --s3-endpoint's), and jobsURL where jobs on this machine reach the
	// main listener; both are set once it listens.
	s3      *builtinS3
	jobsURL string
	auth    authConfig
	// tlsCert and tlsKey, when set, make the server speak HTTPS.
	tlsCert, tlsKey string
	kube            kubeFlags
	data            dataFlags
	containers      containerFlags
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:8080", "address to serve the API on")
	fs.StringVar(&cfg.dataDir, "data-dir", "./sharq-data", "directory for the database, job logs and checkpoints")
	fs.StringVar(&cfg.region, "region", "us-east-1", "region in ARNs")
	fs.StringVar(&cfg.accountID, "account-id", "000000000000", "account ID in ARNs")
	fs.StringVar(&cfg.executor, "executor", "local", "how jobs run: local (processes on this machine), kube (pods on a Kubernetes cluster) or simulated (sleep for the payload's runtime)")
	fs.IntVar(&cfg.maxShares, "max-shares-per-queue", 20, "quota shares allowed per job queue")
	fs.DurationVar(&cfg.retention, "retention", 7*24*time.Hour, "how long ended jobs are kept")
	cfg.usageRetention = engine.DefaultUsageRetention
	fs.Func("usage-retention", "how long usage history is kept, as 400d, 8w or 9600h (0: for ever; default 400d)", func(s string) error {
		d, err := usagehist.ParseDuration(s)
		if err == nil && d < 0 {
			err = errors.New("must not be negative")
		}
		cfg.usageRetention = d
		return err
	})
	fs.DurationVar(&cfg.grace, "stop-grace", 120*time.Second, "time a stopped job gets between SIGTERM and SIGKILL")
	fs.IntVar(&cfg.workers, "executor-workers", 0, "executor calls (starts and stops) made at once (0: 64 for kube, whose calls wait on the API server, else 16)")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&cfg.supervisor, "supervisor", "", "local executor: the program that supervises the attempts, run as PROGRAM "+local.SupervisorArg+" DIR (default: this binary; sharq-supervise is smaller)")
	fs.StringVar(&cfg.store, "store", os.Getenv("SHARQ_STORE"), "postgres://... for a store shared by several servers, one of which leads (default $SHARQ_STORE; empty: SQLite in --data-dir)")
	fs.StringVar(&cfg.advertise, "advertise", "", "with a shared store: the address (HOST:PORT or URL) at which the others reach this server (default: --listen)")
	fs.DurationVar(&cfg.leaseTTL, "lease-ttl", 6*time.Second, "with a shared store: how long the leadership lasts unrenewed; a follower takes over within about 1.25 times this after the leader dies")
	cfg.auth.register(fs)
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; reloaded on SIGHUP)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	cfg.kube.register(fs)
	cfg.data.register(fs)
	cfg.containers.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case cfg.workers < 0:
		fmt.Fprintf(stderr, "sharq serve: --executor-workers must be 0 (the executor's default) or more, not %d\n", cfg.workers)
		return 2
	case cfg.workers == 0 && cfg.executor == "kube":
		cfg.workers = kubeExecutorWorkers
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

func openExecutor(ctx context.Context, cfg serveConfig, log *slog.Logger) (executor.Executor, error) {
	switch cfg.executor {
	case "local":
		opts := local.Options{DataDir: filepath.Join(cfg.dataDir, "executor"), DefaultGrace: cfg.grace, Logger: log}
		var err error
		if opts.Data, opts.NoS3, err = openData(ctx, cfg.data, opts.DataDir, cfg.s3); err != nil {
			return nil, err
		}
		if opts.NoS3 != "" {
			log.Info("jobs that read or write S3 are refused", "why", opts.NoS3)
		}
		e := cfg.data.endpoint
		if cfg.s3 != nil {
			e = cfg.jobsURL
		}
		if e != "" && e != awsS3 {
			// The AWS SDKs and the SageMaker training toolkit read these.
			opts.JobEnv = []string{"AWS_ENDPOINT_URL_S3=" + e, "S3_ENDPOINT_URL=" + e}
		}
		if err := cfg.containers.apply(&opts, log); err != nil {
			return nil, err
		}
		if cfg.lease != nil {
			opts.Held = cfg.lease.Held
		}
		if cfg.supervisor != "" {
			// The supervisor runs in the executor's directory: the path must
			// be absolute.
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
	case "kube":
		return openKube(cfg, log)
	case "simulated":
		return simulated.New(), nil
	}
	return nil, fmt.Errorf("unknown executor %q (want local, kube or simulated)", cfg.executor)
}

func serve(ctx context.Context, cfg serveConfig, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	// One server per SQLite store; servers sharing a PostgreSQL store
	// (and, with the local executor, a data dir) are kept apart by the
	// lease instead.
	var dirLock *dirlock.Lock
	if !isPostgresURL(cfg.store) {
		l, err := dirlock.Acquire(cfg.dataDir, cfg.listen)
		if err != nil {
			return err
		}
		defer l.Release()
		dirLock = l
	}
	st, shared, err := openStore(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	keys := accessStoreOf(st)
	g, err := openGate(ctx, cfg, keys, log)
	if err != nil {
		return err
	}
	defer g.close() // before the store closes
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	front := &frontDoor{}
	srv := &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second}
	scheme, err := setUpTLS(runCtx, cfg, srv, log)
	if err != nil {
		return err
	}
	serveOn := func(ln net.Listener) error {
		if srv.TLSConfig != nil {
			return srv.ServeTLS(ln, "", "")
		}
		return srv.Serve(ln)
	}
	srvDone := make(chan error, 1)
	var ln net.Listener
	var lease *postgres.Lease
	if shared != nil {
		// A follower serves (forwarding to the leader) while it waits.
		ln, err = net.Listen("tcp", cfg.listen)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		front.set(newFollower(shared, log))
		go func() { srvDone <- serveOn(ln) }()
		advertise := cmp.Or(cfg.advertise, ln.Addr().String())
		log.Info("following", "addr", ln.Addr().String(), "advertise", advertise)
		if lease, err = shared.Campaign(ctx, holderName(), advertise, cfg.leaseTTL); err != nil {
			srv.Close()
			if ctx.Err() != nil {
				return nil // stopped while following
			}
			return fmt.Errorf("campaign for the lease: %w", err)
		}
		log.Info("leading", "term", lease.Term())
		cfg.lease = lease
		defer func() {
			// Hand over at once rather than when the lease runs out.
			resign, stop := context.WithTimeout(context.Background(), 5*time.Second)
			defer stop()
			if err := lease.Resign(resign); err != nil {
				log.Warn("resign", "err", err)
			}
		}()
	}
	if shared == nil {
		// Listening before the executor opens tells the jobs where S3 is;
		// nothing is served until the handler is set.
		ln, err = net.Listen("tcp", cfg.listen)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		defer ln.Close()
		if dirLock != nil {
			if err := dirLock.SetAddr(ln.Addr().String()); err != nil {
				return err
			}
		}
	}
	cfg.jobsURL = publicURL(scheme, ln.Addr())
	if wantsBuiltinS3(cfg) {
		if cfg.s3, err = openBuiltinS3(runCtx, cfg, log); err != nil {
			return err
		}
		defer cfg.s3.close()
	}
	ex, err := openExecutor(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("open executor: %w", err)
	}
	defer ex.Close()
	start := time.Now()
	s, err := newServer(ctx, cfg, st, keys, ex, log, g)
	if err != nil {
		return err
	}
	g.setEngine(s.eng)
	log.Info("state loaded", "took", time.Since(start).Round(time.Millisecond))
	// Open console streams and event followers would otherwise hold
	// Shutdown up.
	for _, c := range s.closers {
		srv.RegisterOnShutdown(c)
	}
	front.set(s.handler)
	if shared == nil {
		go func() { srvDone <- serveOn(ln) }()
	}
	if s.audit != nil {
		go s.audit.Run(runCtx, cfg.auth.auditRetention)
		defer func() { cancel(); s.audit.Wait() }() // the last entries are written
	}
	engDone := make(chan error, 1)
	go func() { engDone <- s.eng.Run(runCtx) }()
	log.Info("serving", "addr", ln.Addr().String(), "scheme", scheme, "console", consoleURL(scheme, ln.Addr()), "data_dir", cfg.dataDir, "executor", cfg.executor)

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
	// audit records every mutating call; its Run writes them down. nil
	// when the store keeps no audit log.
	audit *access.Auditor
}

// newServer builds the engine over st and ex, and every route on one mux
// behind the middleware: the AWS Batch API at /v1/, the SageMaker, CloudWatch
// Logs and IAM calls of the SageMaker SDK at POST / (awsRoot), sharq's own routes and
// the console under /sharq/v1/ and /, /metrics and /healthz. Every route
// that reads or changes data asks authz; see package access.
func newServer(ctx context.Context, cfg serveConfig, st store.Store, keys accessStore, ex executor.Executor, log *slog.Logger,
	g accessGate) (*server, error) {
	authn, authz := g.authn, g.authz
	var audit *access.Auditor
	if keys != nil {
		audit = access.NewAuditor(keys, log)
		authz = audit.Authorizer(authz)
	}
	met := metrics.New()
	if c, ok := ex.(prometheus.Collector); ok {
		met.Registry().MustRegister(c) // the kube executor's requests to the API server
	}
	st = met.TimeCommits(st)
	if l, ok := cfg.lease.(metrics.Lease); ok {
		met.WatchLease(l)
	}
	wopts := web.Options{Logger: log, Region: cfg.region, AccountID: cfg.accountID, Authorizer: authz}
	if l, ok := ex.(executor.InstanceLister); ok {
		wopts.Instances = l
	}
	console := web.New(wopts)
	eng, err := engine.New(ctx, engine.Options{
		Region: cfg.region, AccountID: cfg.accountID, Store: st, Executor: ex, Logger: log,
		MaxSharesPerQueue: cfg.maxShares, Retention: cfg.retention, UsageRetention: usageRetention(cfg.usageRetention), StopGrace: cfg.grace, Lease: cfg.lease, ExecutorWorkers: cfg.workers,
		Observers: []jobevents.Observer{met, console, metrics.TransitionLogger{Log: log}},
	})
	if err != nil {
		return nil, fmt.Errorf("start engine: %w", err)
	}
	api := batchapi.New(eng, batchapi.Options{Region: cfg.region, AccountID: cfg.accountID, Logger: log, Authorizer: authz,
		ServesS3: cfg.s3 != nil})
	sopts := sharqapi.Options{Logs: logSource(ex), Logger: log, Region: cfg.region, AccountID: cfg.accountID, Authorizer: authz}
	if keys != nil && g.keyring != nil {
		sopts.Keys, sopts.Audit, sopts.Keyring = g.keyring.Store(), keys, g.keyring
	}
	sharq := sharqapi.New(eng, sopts)
	sm := sagemakerapi.New(eng, sagemakerapi.Options{Region: cfg.region, AccountID: cfg.accountID, Authorizer: authz, Logger: log})
	cwl := logsapi.New(eng, logsapi.Options{Region: cfg.region, AccountID: cfg.accountID, Logs: logSource(ex), Authorizer: authz, Logger: log})
	met.Watch(eng)

	mux := &routes{ServeMux: http.NewServeMux()}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Sharq-Role", "leader")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Sharq-Role", "leader")
		if cfg.lease != nil {
			fmt.Fprintf(w, "leader (term %d)\n", cfg.lease.Term())
			return
		}
		io.WriteString(w, "leader\n")
	})
	mux.Handle("GET /metrics", authorized(authz, access.ActionGetMetrics, met.Handler(), log))
	mux.Handle("/v1/", met.API(api))
	mux.Handle("POST /{$}", awsRoot{sagemaker: sm, logs: cwl})
	sharq.Mount(mux)
	console.Mount(mux, eng, api)
	split := s3Split{rest: mux, endpoint: cfg.data.endpoint}
	if cfg.s3 != nil {
		split.s3 = cfg.s3.srv.WithAuthorizer(authz)
	}
	var routes http.Handler = split
	fail := failIn(api.WriteError)
	if audit != nil {
		routes = audit.Middleware(split)
		answer := fail
		fail = func(w http.ResponseWriter, r *http.Request, err error) {
			answer(w, r, err)
			if serviceOf(r) != "iam" { // IAM's calls only read
				audit.Refused(w, r, err)
			}
		}
	}
	return &server{
		eng:     eng,
		handler: access.Middleware(scopeChecked(routes, fail), authn, fail),
		mux:     mux,
		closers: []func(){console.Close, sharq.Close},
		audit:   audit,
	}, nil
}

// accessStore keeps access keys, policies and the audit log.
type accessStore interface {
	access.KeyStore
	access.AuditStore
}

// accessStoreOf is where st keeps access keys: the SQLite store keeps
// them; nil for a store that does not (PostgreSQL, as yet).
func accessStoreOf(st store.Store) accessStore {
	switch s := st.(type) {
	case *sqlite.Store:
		return s.Keys()
	case *postgres.Store:
		return s.Keys()
	}
	return nil
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

// consoleURL is where a browser on this machine opens the console: a
// server listening on every address is reached through localhost.
func consoleURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// usageRetention is the engine's setting for --usage-retention: 0 there
// means the default, and keeping for ever is negative.
func usageRetention(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
