// Package s3test starts a real S3 server, moto_server, for tests.
//
// A test that calls Start is skipped when moto_server is not installed, unless
// SHARQ_REQUIRE_S3 is set (as CI sets it): then it fails, so a missing server
// never passes for a green run.
package s3test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// RequireEnv names the variable that turns a missing moto_server from a skip
// into a failure.
const RequireEnv = "SHARQ_REQUIRE_S3"

// Region is the region the server and clients use.
const Region = "us-east-1"

// Credentials are the keys moto accepts while it does not enforce IAM.
func Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("testing", "testing", "")
}

// Start starts moto_server on a free local port and returns its endpoint and a
// stop function that kills it at once (tests of a server that dies call it
// early). The server is stopped when the test ends in any case.
func Start(t testing.TB) (endpoint string, stop func()) {
	return start(t, nil)
}

// StartAuth starts a moto_server that serves the first freeActions requests
// without checking credentials and then enforces IAM as AWS does: a request
// signed by a user without a policy is denied. Spend the free requests on
// setup, e.g. a bucket, an object and NewUser's two.
func StartAuth(t testing.TB, freeActions int) (endpoint string, stop func()) {
	return start(t, []string{"INITIAL_NO_AUTH_ACTION_COUNT=" + strconv.Itoa(freeActions)})
}

func start(t testing.TB, env []string) (string, func()) {
	t.Helper()
	srv := StartServer(t, env...)
	return srv.Endpoint, srv.Stop
}

// StartServer is Start for tests that need the Server itself, to Freeze it.
func StartServer(t testing.TB, env ...string) *Server {
	t.Helper()
	Require(t)
	srv, err := Launch(env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// Require skips the test when moto_server is not installed, or fails it when
// RequireEnv is set.
func Require(t testing.TB) {
	t.Helper()
	if _, err := serverCommand(); err == nil {
		return
	}
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("moto_server is not installed and %s is set (pip install 'moto[server]')", RequireEnv)
	}
	t.Skipf("moto_server is not installed; set %s=1 to make this a failure", RequireEnv)
}

// Server is a running moto_server.
type Server struct {
	Endpoint string
	cmd      *exec.Cmd
	exited   chan struct{}
	once     sync.Once
}

// Launch starts moto_server on a free local port with env added to this
// process's environment, for a TestMain that shares one server among tests.
func Launch(env ...string) (*Server, error) {
	argv, err := serverCommand()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], append(argv[1:], "-H", "127.0.0.1", "-p", strconv.Itoa(port))...)
	cmd.Env = append(os.Environ(), env...)
	// Its own process group: the command may be a wrapper that starts Python.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: &log}, &lockedWriter{w: &log}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("moto_server exited before it served: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("moto_server did not answer within a minute: %s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Freeze stops the server's process without closing its connections, as a
// hung server looks to its clients; Thaw resumes it.
func (s *Server) Freeze() { syscall.Kill(-s.cmd.Process.Pid, syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (s *Server) Thaw() { syscall.Kill(-s.cmd.Process.Pid, syscall.SIGCONT) }

// Stop kills the server at once and waits for it; it may be called again.
func (s *Server) Stop() {
	s.once.Do(func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	})
}

// serverCommand finds moto_server.
func serverCommand() ([]string, error) {
	if p, err := exec.LookPath("moto_server"); err == nil {
		return []string{p}, nil
	}
	if exec.Command("python3", "-c", "import moto.server").Run() == nil {
		return []string{"python3", "-m", "moto.server"}, nil
	}
	return nil, errors.New("moto_server is not installed")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Client is an S3 client for the server at endpoint, with Credentials.
func Client(endpoint string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       Region,
		UsePathStyle: true,
		Credentials:  Credentials(),

		DisableLogOutputChecksumValidationSkipped: true,
	})
}

// NewUser creates an IAM user with no policy and an access key for it, and
// returns the key. It makes two requests.
func NewUser(t testing.TB, endpoint, name string) aws.CredentialsProvider {
	t.Helper()
	iam(t, endpoint, url.Values{"Action": {"CreateUser"}, "UserName": {name}})
	body := iam(t, endpoint, url.Values{"Action": {"CreateAccessKey"}, "UserName": {name}})
	var out struct {
		ID     string `xml:"CreateAccessKeyResult>AccessKey>AccessKeyId"`
		Secret string `xml:"CreateAccessKeyResult>AccessKey>SecretAccessKey"`
	}
	if err := xml.Unmarshal(body, &out); err != nil || out.ID == "" {
		t.Fatalf("CreateAccessKey answered %s (%v)", body, err)
	}
	return credentials.NewStaticCredentialsProvider(out.ID, out.Secret, "")
}

// iam makes one signed IAM query request; the signature tells moto's single
// endpoint which service is meant.
func iam(t testing.TB, endpoint string, form url.Values) []byte {
	t.Helper()
	form.Set("Version", "2010-05-08")
	payload := form.Encode()
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sum := sha256.Sum256([]byte(payload))
	creds, _ := Credentials().Retrieve(context.Background())
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "iam", Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("IAM %s: %v", form.Get("Action"), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("IAM %s: %s: %s", form.Get("Action"), resp.Status, body)
	}
	return body
}

// Put stores an object; a helper for tests that fill a bucket.
func Put(t testing.TB, c *s3.Client, bucket, key string, body []byte) {
	t.Helper()
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(body),
	})
	if err != nil {
		t.Fatalf("put s3://%s/%s: %v", bucket, key, err)
	}
}

// Bucket creates a bucket.
func Bucket(t testing.TB, c *s3.Client, bucket string) {
	t.Helper()
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
}

// Untar reads a tar.gz, such as a model.tar.gz, into its regular files'
// names (without a leading "./") and contents.
func Untar(t testing.TB, b []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hd.Typeflag == tar.TypeReg {
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(hd.Name, "./")] = string(body)
		}
	}
}
