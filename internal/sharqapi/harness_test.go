package sharqapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testwait"
)

const queue = "my-sm-training-qm-jq"

// tester is the caller the harness's authenticator vouches for.
var tester = access.Identity{AccessKeyID: "AKIDTESTER", Principal: "arn:aws:iam::000000000000:user/tester"}

// server is sharq's routes in front of a real engine over SQLite in a temp
// dir with the simulated executor, set up as examples/announcement.yaml
// says, behind the middleware.
type server struct {
	t   *testing.T
	eng *engine.Engine
	api *sharqapi.Handler
	url string
}

func start(t *testing.T, opts sharqapi.Options) *server {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ex := simulated.New()
	eng, err := engine.New(t.Context(), engine.Options{Store: st, Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	cfg, err := clusterconfig.Load("../../examples/announcement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterconfig.Apply(ctx, eng, cfg); err != nil {
		t.Fatal(err)
	}
	api := sharqapi.New(eng, opts)
	authn := access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return tester, nil })
	srv := httptest.NewServer(access.Middleware(api, authn, func(w http.ResponseWriter, _ *http.Request, err error) {
		t.Errorf("authentication failed: %v", err)
	}))
	t.Cleanup(func() {
		api.Close() // followers end, so Close does not wait for them
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
		ex.Close()
		st.Close()
	})
	return &server{t: t, eng: eng, api: api, url: srv.URL}
}

// submit submits a job of one ml.g5.xlarge that runs until it is stopped.
func (s *server) submit(name, share string, prio int) string {
	s.t.Helper()
	j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", QuotaShareName: share, SchedulingPriority: &prio,
		ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1}}`})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.JobID
}

// wait polls until the job has one of the statuses.
func (s *server) wait(id string, statuses ...string) record.Job {
	s.t.Helper()
	var j record.Job
	testwait.Until(s.t, 15*time.Second, func() error {
		var err error
		if j, err = s.eng.DescribeServiceJob(context.Background(), id); err != nil {
			s.t.Fatal(err)
		}
		if !slices.Contains(statuses, j.Status) {
			return fmt.Errorf("job %s is %s, want %v", j.JobName, j.Status, statuses)
		}
		return nil
	})
	return j
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
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
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
