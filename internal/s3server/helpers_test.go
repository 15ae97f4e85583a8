package s3server_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/access/sigv4/sigv4test"
	"github.com/sharq-dev/sharq/internal/s3server"
)

const (
	keyID  = "SKIAS3TESTKEY00000001"
	secret = "s3-test/secret+chars"
	alice  = "arn:aws:iam::000000000000:user/alice"
)

// keys is a credential source of one key, alice's.
var keys = sigv4test.Key{ID: keyID, Secret: secret, Principal: alice}

// env is an S3 server behind SigV4, as sharq serves it, and an AWS SDK
// client signed with alice's key.
type env struct {
	srv    *s3server.Server
	dir    string
	url    string
	client *s3.Client
	http   *http.Client

	mu       sync.Mutex
	payloads []string // each request's X-Amz-Content-Sha256
}

// sawPayload tells whether a request came with X-Amz-Content-Sha256 v.
func (e *env) sawPayload(v string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.payloads, v)
}

type envOptions struct {
	dir   string // default: a new temp dir
	tls   bool
	authz access.Authorizer
	now   func() time.Time
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	srv, err := s3server.New(s3server.Options{Dir: dir, Authorizer: o.authz, Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	verifier := sigv4.New(sigv4.Options{Credentials: keys, Services: []string{"s3"}})
	fail := func(w http.ResponseWriter, r *http.Request, err error) {
		var ae *access.AuthError
		if !errors.As(err, &ae) {
			t.Errorf("not an AuthError: %v", err)
		}
		s3server.WriteError(w, r, ae.Status, ae.Code, ae.Message)
	}
	e := &env{srv: srv, dir: dir}
	h := access.Middleware(srv, verifier, fail)
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.payloads = append(e.payloads, r.Header.Get("X-Amz-Content-Sha256"))
		e.mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	var ts *httptest.Server
	if o.tls {
		ts = httptest.NewTLSServer(h)
	} else {
		ts = httptest.NewServer(h)
	}
	t.Cleanup(ts.Close)
	hc := ts.Client()
	if o.tls {
		hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(ts.URL), UsePathStyle: true, HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider(keyID, secret, ""),
	})
	e.url, e.client, e.http = ts.URL, client, hc
	return e
}

// code is the S3 error code of err, "" for none.
func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// newEnvOn is a server started over dir, as after a restart.
func newEnvOn(t *testing.T, dir string) *env {
	t.Helper()
	return newEnv(t, envOptions{dir: dir})
}
