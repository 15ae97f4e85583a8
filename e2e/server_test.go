package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/testwait"
)

const (
	region  = "us-east-1"
	account = "000000000000"
)

// serverOptions says how to start sharq serve.
type serverOptions struct {
	dataDir  string   // default: a new temp dir
	executor string   // default: simulated
	args     []string // more flags
	// tls, when set, is how clients trust a server started with
	// --tls-cert: its URL is https://.
	tls *tls.Config
	// env replaces variables of the server's environment (NAME=value);
	// unsetEnv removes them. Otherwise the server inherits the test's.
	env      []string
	unsetEnv []string
}

// server is one running `sharq serve` process.
type server struct {
	t       *testing.T
	dataDir string
	url     string // http://127.0.0.1:port
	cmd     *exec.Cmd
	log     *serverLog
	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // the process's exit, valid once exited is closed
	tls     *tls.Config   // how clients trust it, for an HTTPS server
}

// startServer starts sharq serve on a free loopback port and waits until
// GET /healthz answers 200. The process is killed when the test ends if it
// still runs, and its log goes to the test log if the test failed.
func startServer(t *testing.T, opts serverOptions) *server {
	t.Helper()
	if opts.dataDir == "" {
		opts.dataDir = t.TempDir()
	}
	if opts.executor == "" {
		opts.executor = "simulated"
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", opts.dataDir, "--executor", opts.executor}
	if opts.executor == "local" {
		// Jobs run as processes unless a test asks for containers (a later
		// flag wins).
		args = append(args, "--container-runtime", "none")
	}
	args = append(args, opts.args...)
	s := &server{t: t, dataDir: opts.dataDir, log: newServerLog(), exited: make(chan struct{})}
	s.cmd = exec.Command(sharqBin, args...)
	if opts.env != nil || opts.unsetEnv != nil {
		s.cmd.Env = serverEnv(opts)
	}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{})
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sharq serve: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.kill()
		killStragglers(t, s.dataDir)
		if strings.Contains(s.log.String(), "WARNING: DATA RACE") {
			t.Errorf("the race detector found a data race in sharq serve (pid %d); see its log", s.cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("log of sharq %s (pid %d):\n%s", strings.Join(args, " "), s.cmd.Process.Pid, s.log.String())
		}
	})

	const startTimeout = 60 * time.Second
	began := time.Now()
	select {
	case addr := <-s.log.addr:
		s.url = "http://" + addr
		if opts.tls != nil {
			s.url, s.tls = "https://"+addr, opts.tls
		}
	case <-s.exited:
		t.Fatalf("sharq serve exited before serving: %v", s.waitErr)
	case <-time.After(startTimeout):
		t.Fatalf("sharq serve logged no \"serving\" line with its address within 60 s")
	}
	s.waitHealthy(startTimeout - time.Since(began))
	return s
}

// serverEnv is the test's environment without opts.unsetEnv and with
// opts.env in place of what it names.
func serverEnv(opts serverOptions) []string {
	drop := slices.Clone(opts.unsetEnv)
	for _, kv := range opts.env {
		name, _, _ := strings.Cut(kv, "=")
		drop = append(drop, name)
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(drop, name) {
			env = append(env, kv)
		}
	}
	return append(env, opts.env...)
}

// waitHealthy polls GET /healthz until it answers 200.
func (s *server) waitHealthy(timeout time.Duration) {
	s.t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: s.tls}}
	testwait.Until(s.t, timeout, func() error {
		select {
		case <-s.exited:
			s.t.Fatalf("sharq serve exited before /healthz answered: %v", s.waitErr)
		default:
		}
		resp, err := c.Get(s.url + "/healthz")
		if err != nil {
			return fmt.Errorf("GET /healthz did not answer 200: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s/healthz answered %d, want 200", s.url, resp.StatusCode)
		}
		return nil
	})
}

// stop ends the server with SIGTERM and expects a clean exit (status 0).
func (s *server) stop() {
	s.t.Helper()
	select {
	case <-s.exited:
		s.t.Fatalf("sharq serve had already exited: %v", s.waitErr)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
		s.t.Fatalf("sharq serve did not exit within 30 s of SIGTERM")
	}
	if s.waitErr != nil {
		s.t.Errorf("sharq serve exited with %v after SIGTERM, want status 0", s.waitErr)
	}
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *server) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// client is an AWS SDK for Go Batch client for the server. It retries
// nothing, so every error reaches the test.
func (s *server) client() *batch.Client {
	hc := &http.Client{Timeout: 30 * time.Second}
	if s.tls != nil {
		hc.Transport = &http.Transport{TLSClientConfig: s.tls}
	}
	return batch.New(batch.Options{
		Region:       region,
		BaseEndpoint: aws.String(s.url),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   ownBodies{hc},
	})
}

// ownBodies is the HTTP client of the tests' SDK clients: it sends a copy
// of each request's body, which the SDK cannot close under net/http.
//
// NB: the SDK closes a request's body as soon as the response has come
// (smithy-go's ClientHandler). net/http, having sent a body of known
// length, reads it once more to check that nothing is left; if that read
// comes after the close, smithy-go's body answers io.EOF as an error,
// net/http takes it for a failed write and closes the connection while
// the response is being read: "use of closed network connection"
// (aws/aws-sdk-go-v2#2737). On loopback, under load, the response can
// beats that last read. A body in memory also goes out with the headers
// in one write.
type ownBodies struct{ hc *http.Client }

func (c ownBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return c.hc.Do(r)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return c.hc.Do(r)
}

// call posts a raw JSON request to /v1/<op> and decodes the answer, for
// comparing whole documents.
func (s *server) call(op string, in any) (int, map[string]any) {
	s.t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.Post(s.url+"/v1/"+op, "application/json", bytes.NewReader(body))
	if err != nil {
		s.t.Fatalf("POST /v1/%s: %v", op, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("POST /v1/%s: %v", op, err)
	}
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			s.t.Fatalf("POST /v1/%s answered %d with a body that is not JSON: %q", op, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out
}

// serverLog keeps the server's output and picks out the address it
// logs when it starts serving (or, on a shared store, following).
type serverLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	addr    chan string
	found   bool
}

func newServerLog() *serverLog { return &serverLog{addr: make(chan string, 1)} }

func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.found {
		return len(p), nil
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := l.partial[:i]
		l.partial = l.partial[i+1:]
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(line, &rec) == nil && (rec.Msg == "serving" || rec.Msg == "following") && rec.Addr != "" {
			l.found = true
			l.partial = nil
			l.addr <- rec.Addr
			break
		}
	}
	return len(p), nil
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// killStragglers kills whatever process still refers to the data dir by
// its command line or working directory: local-executor supervisors and
// their jobs, which by design outlive the server.
func killStragglers(t *testing.T, dataDir string) {
	t.Helper()
	// Each round kills what it finds: a process may fork a child just
	// before it is killed, which the next listing shows.
	var pids []int
	err := testwait.For(10*time.Second, func() error {
		if pids = processesUnder(dataDir); len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return fmt.Errorf("processes under %s survive SIGKILL", dataDir)
	})
	if err != nil {
		var about []string
		for _, pid := range pids {
			about = append(about, describeProcess(pid))
		}
		t.Errorf("%v:\n%s", err, strings.Join(about, "\n"))
	}
}

// describeProcess says what /proc knows of pid: its state, parent, where
// it waits in the kernel and its command line.
func describeProcess(pid int) string {
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	stat, _ := os.ReadFile(filepath.Join(proc, "stat"))
	wchan, _ := os.ReadFile(filepath.Join(proc, "wchan"))
	cmdline, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
	return fmt.Sprintf("  %d: stat %q, wchan %q, cmdline %q", pid, bytes.TrimSpace(stat), wchan, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
}

// processesUnder lists the live processes, other than this one and the
// excepted ones, whose command line or working directory mentions dir.
func processesUnder(dir string, except ...int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || slices.Contains(except, pid) {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		if st, err := os.ReadFile(filepath.Join(proc, "stat")); err == nil && isZombie(st) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		if bytes.Contains(cmdline, []byte(dir)) || cwd == dir || strings.HasPrefix(cwd, dir+"/") {
			out = append(out, pid)
		}
	}
	return out
}

// isZombie reads the state field of /proc/<pid>/stat.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// ctx is a context for one test's requests.
func ctx(t *testing.T) context.Context { return t.Context() }

var errNotYet = errors.New("not yet")

func notYet(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errNotYet}, args...)...)
}
