package s3data

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// shared is one moto_server for the tests that do not stop or reconfigure it.
var (
	shared    *s3test.Server
	launchErr error
)

func TestMain(m *testing.M) {
	progressEvery = 10 * time.Millisecond
	shared, launchErr = s3test.Launch()
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// server returns the shared server's endpoint and a client for it.
func server(t *testing.T) (string, *s3.Client) {
	t.Helper()
	s3test.Require(t)
	if launchErr != nil {
		t.Fatal(launchErr)
	}
	return shared.Endpoint, s3test.Client(shared.Endpoint)
}

var bucketSeq atomic.Int64

// newBucket creates a bucket named after the test.
func newBucket(t *testing.T, c *s3.Client) string {
	t.Helper()
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	name = fmt.Sprintf("%.40s-%d", strings.Trim(name, "-"), bucketSeq.Add(1))
	s3test.Bucket(t, c, name)
	return name
}

func newStore(t *testing.T, endpoint string, change func(*Config)) *Store {
	t.Helper()
	cfg := Config{Endpoint: endpoint, Region: s3test.Region, PathStyle: true, Credentials: s3test.Credentials()}
	if change != nil {
		change(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tree reads every regular file below dir as relative path -> content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// assertClean checks that a failed Stage left neither dst nor a staging
// directory beside it.
func assertClean(t *testing.T, dst string) {
	t.Helper()
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("%s exists after a failed stage", dst)
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".staging-") {
			t.Errorf("staging directory %s left behind", e.Name())
		}
	}
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// reqCounter is a reverse proxy in front of an S3 server that counts object
// requests of one method (a GET that lists is not counted), so a test sees
// what was downloaded or uploaded.
type reqCounter struct {
	endpoint string
	method   string
	mu       sync.Mutex
	gets     map[string]int // path -> requests
}

func countRequests(t *testing.T, endpoint, method string) *reqCounter {
	t.Helper()
	target, _ := url.Parse(endpoint)
	c := &reqCounter{method: method, gets: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == c.method && !r.URL.Query().Has("list-type") {
			c.mu.Lock()
			c.gets[r.URL.Path]++
			c.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	})}
	l := listen(t)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c.endpoint = "http://" + l.Addr().String()
	return c
}

// take returns the requests counted so far and starts counting afresh.
func (c *reqCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.gets
	c.gets = map[string]int{}
	return got
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
