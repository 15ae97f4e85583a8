package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/local"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testserver"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// t0 is the engine's frozen clock: every time the server records is t0,
// so tables show the same times and ages on every run.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// TestMain lets the test binary act as the local executor's supervisor, as
// the sharq binary does, and fixes what output depends on: the clock the
// CLI reads, the time zone and the AWS configuration of the machine.
func TestMain(m *testing.M) {
	if code, ok := local.HiddenMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	time.Local = time.UTC
	now = func() time.Time { return t0.Add(90 * time.Second) }
	pollInterval = 20 * time.Millisecond
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"SHARQ_ENDPOINT", "SHARQ_QUEUE", "SHARQ_SHARE", "AWS_ENDPOINT_URL_BATCH", "AWS_ENDPOINT_URL"} {
		os.Unsetenv(k)
	}
	os.Setenv("AWS_CONFIG_FILE", "/nonexistent/sharq-test/config")
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/sharq-test/credentials")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Exit(m.Run())
}

// fixedClock stays at t0 to the millisecond, which is all that records
// and tables show, but moves on by a nanosecond at each reading, so that
// each engine cycle has an instant of its own (spec 2.3: a job preempted
// at an instant waits for a later one).
type fixedClock struct{ ns *atomic.Int64 }

func (c fixedClock) Now() time.Time { return t0.Add(time.Duration(c.ns.Add(1))) }

// frozenUpdates passes the executor's updates on without their times, so
// that the engine stamps them with its frozen clock.
type frozenUpdates struct {
	executor.Executor
	ch chan executor.Update
}

func freeze(ex executor.Executor) *frozenUpdates {
	f := &frozenUpdates{Executor: ex, ch: make(chan executor.Update, 1024)}
	go func() {
		for u := range ex.Updates() {
			u.At = time.Time{}
			f.ch <- u
		}
		close(f.ch)
	}()
	return f
}

func (f *frozenUpdates) Updates() <-chan executor.Update { return f.ch }

// CheckSubmit passes the local executor's check of submissions through the
// wrapper.
func (f *frozenUpdates) CheckSubmit(r *trainingjob.Request) error {
	if c, ok := f.Executor.(executor.SubmitChecker); ok {
		return c.CheckSubmit(r)
	}
	return nil
}

// Logs passes the local executor's logs through the wrapper.
func (f *frozenUpdates) Logs(ctx context.Context, attemptID, host, stream string, offset int64) (io.ReadCloser, error) {
	if l, ok := f.Executor.(executor.LogReader); ok {
		return l.Logs(ctx, attemptID, host, stream, offset)
	}
	return nil, executor.ErrNoLogs
}

// server is a real sharq server in the test: the engine over a SQLite
// store in a temp dir, the AWS API and sharq's routes on one mux.
type server struct {
	t    *testing.T
	url  string
	eng  *engine.Engine
	keys access.KeyStore
}

// newServer starts a server on the simulated executor, or on the local
// one when localExec is true.
func newServer(t *testing.T, localExec bool) *server {
	t.Helper()
	return startServer(t, localExec, nil)
}

// newKeyedServer starts a server on the simulated executor that checks
// signatures with its access keys (unsigned requests come in as the
// anonymous caller); ring issues them.
func newKeyedServer(t *testing.T) (s *server, ring *access.Keyring) {
	t.Helper()
	s = startServer(t, false, func(h http.Handler, keys access.KeyStore) http.Handler {
		var err error
		if ring, err = access.NewKeyring(keys, make([]byte, access.ServerKeySize), "000000000000"); err != nil {
			t.Fatal(err)
		}
		return access.Middleware(h, sigv4.New(sigv4.Options{Credentials: ring, AllowUnsigned: true}), batchapi.New(nil, batchapi.Options{}).WriteError)
	})
	return s, ring
}

// startServer starts a server, its handler wrapped by wrap when not nil.
func startServer(t *testing.T, localExec bool, wrap func(http.Handler, access.KeyStore) http.Handler) *server {
	t.Helper()
	return startSeededServer(t, localExec, wrap, nil)
}

// startSeededServer starts a server whose store seed has written to
// first, when not nil: what an earlier server left.
func startSeededServer(t *testing.T, localExec bool, wrap func(http.Handler, access.KeyStore) http.Handler, seed func(*sqlite.Store)) *server {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	if seed != nil {
		seed(st)
	}
	opts := testserver.Options{Store: st, Clock: fixedClock{new(atomic.Int64)}, StopGrace: time.Second,
		Executor: simulated.New(), Sharq: sharqapi.Options{Keys: st.Keys()}}
	if localExec {
		if opts.Executor, err = local.New(local.Options{DataDir: filepath.Join(dir, "executor"), GPUs: []int{}, DefaultGrace: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	fx := freeze(opts.Executor)
	opts.WrapExecutor = func(executor.Executor) executor.Executor { return fx }
	if localExec {
		opts.Sharq.Logs = fx
	}
	var seq atomic.Int64
	opts.NewID = func() string { return jobID(int(seq.Add(1))) }
	if wrap != nil {
		opts.Wrap = func(_ *testserver.Server, h http.Handler) http.Handler { return wrap(h, st.Keys()) }
	}
	srv := testserver.Start(t, opts)
	return &server{t: t, url: srv.URL, eng: srv.Engine, keys: st.Keys()}
}

// result is what a verb printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

type verbFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// run runs a verb against the server, as `sharq VERB ARGS... --endpoint URL`.
func (s *server) run(verb verbFunc, args ...string) result {
	s.t.Helper()
	return s.runCtx(s.t.Context(), verb, args...)
}

func (s *server) runCtx(ctx context.Context, verb verbFunc, args ...string) result {
	var out, errOut bytes.Buffer
	code := verb(ctx, append([]string{"--endpoint", s.url}, args...), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

// ok runs a verb that must succeed and returns its stdout.
func (s *server) ok(verb verbFunc, args ...string) string {
	s.t.Helper()
	r := s.run(verb, args...)
	if r.code != 0 {
		s.t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// status returns a job's status as the engine has it.
func (s *server) status(id string) string {
	j, err := s.eng.DescribeServiceJob(context.Background(), id)
	if err != nil {
		return "error: " + err.Error()
	}
	return j.Status
}

// waitStatus waits until a job reaches a status.
func (s *server) waitStatus(id, status string) {
	s.t.Helper()
	testwait.True(s.t, 15*time.Second, id+" "+status, func() bool { return s.status(id) == status })
}

// jobID is the n-th job ID the test server hands out.
func jobID(n int) string { return fmt.Sprintf("01a22d8d-0000-7000-8000-0000%08d", n) }

// golden compares got with testdata/NAME.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// expect checks a result's exit code and that stderr holds a text.
func expect(t *testing.T, r result, code int, stderr string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, stderr) {
		t.Errorf("stderr %q lacks %q", r.stderr, stderr)
	}
}
