package sigv4_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/access/sigv4/sigv4test"
)

const (
	keyID  = "SKIATESTKEY0000000001"
	secret = "s3cr3t/with+chars"
	alice  = "arn:aws:iam::000000000000:user/alice"
)

// keys is a credential source of one key, alice's.
var keys = sigv4test.Key{ID: keyID, Secret: secret, Principal: alice}

// seen is what the route behind the verifier saw of the last request.
type seen struct {
	id   access.Identity
	body string
}

// newServer serves the verifier in front of a route that records the
// caller and the body it reads, and answers {} (or refusals in AWS's
// error shape).
func newServer(t *testing.T, opts sigv4.Options) (*httptest.Server, *seen) {
	t.Helper()
	opts.Credentials = keys
	last := &seen{}
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*last = seen{id: access.Caller(r.Context()), body: string(b)}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	})
	fail := func(w http.ResponseWriter, _ *http.Request, err error) {
		var ae *access.AuthError
		if !errors.As(err, &ae) {
			t.Errorf("not an AuthError: %v", err)
			w.WriteHeader(500)
			return
		}
		w.Header().Set("X-Amzn-ErrorType", ae.Code)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ae.Status)
		json.NewEncoder(w).Encode(map[string]string{"__type": ae.Code, "message": ae.Message})
	}
	srv := httptest.NewServer(access.Middleware(route, sigv4.New(opts), fail))
	t.Cleanup(srv.Close)
	return srv, last
}

func sdk(srv *httptest.Server, id, secret, region string) *batch.Client {
	return batch.New(batch.Options{Region: region, BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(id, secret, "")})
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Ensure the Go SDK's signed requests pass, in both body and path forms,
// and that every wrong credential is refused with AWS's code.
func TestGoSDK(t *testing.T) {
	for name, tc := range map[string]struct {
		id, secret, region string
		skew               time.Duration
		want               string
	}{
		"OK":              {keyID, secret, "us-east-1", 0, ""},
		"OKSkewed14m":     {keyID, secret, "us-east-1", 14 * time.Minute, ""},
		"WrongSecret":     {keyID, "wrong", "us-east-1", 0, "InvalidSignatureException"},
		"UnknownKey":      {"SKIANOSUCHKEY", secret, "us-east-1", 0, "UnrecognizedClientException"},
		"ClockAhead16m":   {keyID, secret, "us-east-1", 16 * time.Minute, "InvalidSignatureException"},
		"ClockBehind16m":  {keyID, secret, "us-east-1", -16 * time.Minute, "InvalidSignatureException"},
		"WrongRegion":     {keyID, secret, "eu-west-1", 0, "InvalidSignatureException"},
		"UnsignedRefused": {"", "", "us-east-1", 0, "MissingAuthenticationTokenException"},
	} {
		t.Run(name, func(t *testing.T) {
			srv, last := newServer(t, sigv4.Options{Now: func() time.Time { return time.Now().Add(tc.skew) }})
			c := sdk(srv, tc.id, tc.secret, tc.region)
			if tc.id == "" {
				c = batch.New(batch.Options{Region: tc.region, BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}})
			}
			_, err := c.ListServiceJobs(t.Context(), &batch.ListServiceJobsInput{JobQueue: aws.String("jq")})
			if got := errorCode(err); got != tc.want {
				t.Fatalf("error code %q (%v), want %q", got, err, tc.want)
			}
			if tc.want == "" && (last.id.Principal != alice || !strings.Contains(last.body, `"jobQueue":"jq"`)) {
				t.Errorf("route saw %+v", last)
			}
			// A tags call puts an escaped ARN in the path.
			_, err = c.ListTagsForResource(t.Context(), &batch.ListTagsForResourceInput{
				ResourceArn: aws.String("arn:aws:batch:us-east-1:000000000000:job-queue/jq")})
			if got := errorCode(err); got != tc.want {
				t.Fatalf("tags: error code %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// signed returns a request to srv signed by alice's key at when.
func signed(t *testing.T, srv *httptest.Server, body string, when time.Time) *http.Request {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/listservicejobs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, req,
		sha256Hex(body), "batch", "us-east-1", when)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func status(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType")
}

// Ensure a signed request replayed with another body, or with a header
// it signed changed, is refused and never reaches the route.
func TestTampered(t *testing.T) {
	srv, last := newServer(t, sigv4.Options{})
	req := signed(t, srv, `{"jobQueue":"a"}`, time.Now())
	req.Body = io.NopCloser(strings.NewReader(`{"jobQueue":"b"}`))
	if code, typ := status(t, req); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("tampered body: %d %s", code, typ)
	}
	req = signed(t, srv, `{}`, time.Now())
	req.Header.Set("Content-Type", "text/plain")
	if code, typ := status(t, req); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("tampered header: %d %s", code, typ)
	}
	req = signed(t, srv, `{}`, time.Now())
	req.Header.Set("X-Amz-Content-Sha256", sha256Hex(`{"other":1}`))
	if code, typ := status(t, req); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("payload hash of another body: %d %s", code, typ)
	}
	req = signed(t, srv, `{}`, time.Now())
	req.Header.Set("X-Amz-Security-Token", "token")
	if code, typ := status(t, req); code != 403 || typ != "UnrecognizedClientException" {
		t.Errorf("session token: %d %s", code, typ)
	}
	if last.id.Principal != "" {
		t.Errorf("the route was reached: %+v", last)
	}
	// Unsigned requests pass as anonymous only when allowed.
	srv, last = newServer(t, sigv4.Options{AllowUnsigned: true})
	req, _ = http.NewRequest("GET", srv.URL+"/healthz", nil)
	if code, _ := status(t, req); code != 200 || last.id != access.Anonymous {
		t.Errorf("unsigned, allowed: %d, %+v", code, last.id)
	}
}

// Ensure malformed Authorization headers get IncompleteSignatureException.
func TestIncomplete(t *testing.T) {
	srv, _ := newServer(t, sigv4.Options{})
	date := time.Now().UTC().Format("20060102T150405Z")
	for name, auth := range map[string]string{
		"NoCredential":    "AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("0", 64),
		"ShortCredential": "AWS4-HMAC-SHA256 Credential=" + keyID + "/x, SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("0", 64),
		"OtherScheme":     "Basic YWxpY2U6cGFzcw==",
		"NoHost":          "AWS4-HMAC-SHA256 Credential=" + keyID + "/" + date[:8] + "/us-east-1/batch/aws4_request, SignedHeaders=x-amz-date, Signature=" + strings.Repeat("0", 64),
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/listservicejobs", strings.NewReader("{}"))
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Amz-Date", date)
		if code, typ := status(t, req); code != 400 || typ != "IncompleteSignatureException" {
			t.Errorf("%s: %d %s", name, code, typ)
		}
	}
}

// Ensure presigned URLs work, and stop working when they expire.
func TestPresigned(t *testing.T) {
	srv, last := newServer(t, sigv4.Options{})
	presign := func(when time.Time, expires string) string {
		req, _ := http.NewRequest("GET", srv.URL+"/sharq/v1/events?queue=jq&X-Amz-Expires="+expires, nil)
		u, _, err := v4.NewSigner().PresignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
			req, sha256Hex(""), "batch", "us-east-1", when)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	req, _ := http.NewRequest("GET", presign(time.Now(), "60"), nil)
	if code, typ := status(t, req); code != 200 || last.id.Principal != alice {
		t.Errorf("presigned: %d %s, route saw %+v", code, typ, last.id)
	}
	req, _ = http.NewRequest("GET", presign(time.Now().Add(-2*time.Minute), "60"), nil)
	if code, typ := status(t, req); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("expired presigned: %d %s", code, typ)
	}
	req, _ = http.NewRequest("GET", strings.Replace(presign(time.Now(), "60"), "queue=jq", "queue=other", 1), nil)
	if code, typ := status(t, req); code != 403 || typ != "InvalidSignatureException" {
		t.Errorf("presigned with its query changed: %d %s", code, typ)
	}
}

// Ensure boto3's signatures pass and its wrong ones are refused with the
// codes botocore surfaces.
func TestBoto3(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): this test signs with boto3", err)
	}
	srv, last := newServer(t, sigv4.Options{})
	out, err := exec.CommandContext(t.Context(), py, "testdata/boto3_sign.py", srv.URL, keyID, secret).CombinedOutput()
	if err != nil {
		t.Fatalf("testdata/boto3_sign.py: %v\n%s", err, out)
	}
	want := "ok\nwrong-secret InvalidSignatureException\nunknown-key UnrecognizedClientException\nunsigned MissingAuthenticationTokenException\n"
	if string(out) != want {
		t.Errorf("boto3 said:\n%s\nwant:\n%s", out, want)
	}
	if last.id.Principal != alice || !bytes.Contains([]byte(last.body), []byte(`"jobQueue": "jq"`)) {
		t.Errorf("route saw %+v", last)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Ensure a scope may name any of the services the verifier is given, and
// that ScopeService reads the one a request names.
func TestServices(t *testing.T) {
	for name, tc := range map[string]struct {
		services []string
		want     string
	}{
		"BatchOnly":     {nil, "InvalidSignatureException"},
		"SageMakerToo":  {[]string{"batch", "sagemaker"}, ""},
		"OtherServices": {[]string{"batch", "logs"}, "InvalidSignatureException"},
	} {
		t.Run(name, func(t *testing.T) {
			var scoped string
			srv, last := newServer(t, sigv4.Options{Services: tc.services})
			c := sagemaker.New(sagemaker.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
				Credentials: credentials.NewStaticCredentialsProvider(keyID, secret, "")},
				func(o *sagemaker.Options) {
					o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
						return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("scope",
							func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
								if r, ok := in.Request.(*smithyhttp.Request); ok {
									scoped = sigv4.ScopeService(r.Request)
								}
								return next.HandleFinalize(ctx, in)
							}), middleware.After)
					})
				})
			_, err := c.DescribeTrainingJob(t.Context(), &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String("tj")})
			if got := errorCode(err); got != tc.want {
				t.Fatalf("error code %q (%v), want %q", got, err, tc.want)
			}
			if scoped != "sagemaker" {
				t.Errorf("ScopeService = %q, want sagemaker", scoped)
			}
			if tc.want == "" && last.id.Principal != alice {
				t.Errorf("caller %q, want %q", last.id.Principal, alice)
			}
		})
	}
}

// Ensure a global service's requests, signed in us-east-1, pass a server
// of another region only when the service is named global.
func TestGlobalServices(t *testing.T) {
	for name, tc := range map[string]struct {
		global []string
		want   int
	}{
		"Global":    {[]string{"iam"}, http.StatusOK},
		"NotGlobal": {nil, http.StatusForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := newServer(t, sigv4.Options{Region: "eu-west-1", Services: []string{"batch", "iam"}, GlobalServices: tc.global})
			body := "Action=GetRole&RoleName=r&Version=2010-05-08"
			req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			sum := sha256.Sum256([]byte(body))
			if err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, req,
				hex.EncodeToString(sum[:]), "iam", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
