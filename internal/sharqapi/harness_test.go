package sharqapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/testserver"
)

const queue = "my-sm-training-qm-jq"

// tester is the caller the harness's authenticator vouches for.
var tester = testserver.Tester

// server is sharq's routes, as serve wires them, in front of a real engine
// over SQLite in a temp dir with the simulated executor, set up as
// examples/announcement.yaml says, behind the middleware.
type server struct {
	t   *testing.T
	srv *testserver.Server
	eng *engine.Engine
	api *sharqapi.Handler
	url string
}

func start(t *testing.T, opts sharqapi.Options) *server {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{Sharq: opts, Authenticator: testserver.AsTester(),
		Config: "../../examples/announcement.yaml"})
	return &server{t: t, srv: srv, eng: srv.Engine, api: srv.Sharq, url: srv.URL}
}

// submit submits a job of one ml.g5.xlarge that runs until it is stopped.
func (s *server) submit(name, share string, prio int) string {
	s.t.Helper()
	return s.srv.Submit(s.t, queue, name, share, prio)
}

// wait waits until the job has one of the statuses.
func (s *server) wait(id string, statuses ...string) record.Job {
	s.t.Helper()
	return s.srv.WaitStatus(s.t, id, statuses...)
}

// walkthrough submits QS1's three jobs: high runs on QS1's instance, med
// borrows one, low waits.
func (s *server) walkthrough() (high, med, low string) {
	s.t.Helper()
	high, med, low = s.submit("high", "QS1", 3), s.submit("med", "QS1", 2), s.submit("low", "QS1", 1)
	s.wait(high, "RUNNING")
	s.wait(med, "RUNNING")
	s.wait(low, "RUNNABLE")
	return high, med, low
}

// response is an answer read in full.
type response struct {
	status int
	header http.Header
	body   string
}

func (s *server) do(method, path, body string) response {
	s.t.Helper()
	r := s.srv.Do(s.t, method, path, body)
	return response{r.Status, r.Header, r.Body}
}

// get reads a JSON answer into v, failing unless it is a 200.
func (s *server) get(method, path, body string, v any) {
	s.t.Helper()
	r := s.do(method, path, body)
	if r.status != http.StatusOK {
		s.t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		s.t.Fatalf("%s %s: %v in %s", method, path, err, r.body)
	}
}

// wantError checks an error answer's status and that its message holds
// want.
func wantError(t *testing.T, r response, status int, want string) {
	t.Helper()
	var e sharqapi.Error
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != status || !strings.Contains(e.Message, want) {
		t.Errorf("got %d %s, want %d with %q", r.status, r.body, status, want)
	}
}

// logDir is a LogReader that keeps every attempt's logs in one directory.
type logDir struct {
	dir string
	mu  sync.Mutex
	ids []string
}

func (l *logDir) Logs(ctx context.Context, id, host, stream string, offset int64) (io.ReadCloser, error) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
	f, err := os.Open(filepath.Join(l.dir, host+"."+stream))
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
