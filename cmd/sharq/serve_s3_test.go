package main

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
)

// authFor is an Authorization header that names service in its scope
// (serviceOf reads the scope; the signature is the authenticator's).
func authFor(service string) string {
	return "AWS4-HMAC-SHA256 Credential=SKIAEXAMPLE/20260101/us-east-1/" + service + "/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("0", 64)
}

// Ensure S3 requests are told from the console's, the Batch API's and the
// JSON POSTs to / by their scope (and virtual-hosted Host), whatever their
// path.
func TestServiceOfS3(t *testing.T) {
	for _, tc := range []struct {
		name, method, url, service, host, want string
	}{
		{"ListBuckets", "GET", "/", "s3", "", "s3"},
		{"the console's page", "GET", "/", "", "", "batch"},
		{"an object named like a route", "GET", "/v1/listservicejobs", "s3", "", "s3"},
		{"a Batch call", "POST", "/v1/listservicejobs", "batch", "", "batch"},
		{"an object under jobs", "PUT", "/jobs/key", "s3", "", "s3"},
		{"a console job page", "GET", "/jobs/abc", "", "", "batch"},
		{"virtual-hosted, unsigned", "GET", "/key", "", "data.localhost:8080", "s3"},
		{"a SageMaker call", "POST", "/", "sagemaker", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.url, nil)
			if tc.service != "" {
				r.Header.Set("Authorization", authFor(tc.service))
				r.Header.Set("X-Amz-Date", "20260101T000000Z")
			}
			if tc.host != "" {
				r.Host = tc.host
			}
			if got := serviceOf(r); got != tc.want {
				t.Fatalf("serviceOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// Ensure a refused S3 request is answered in S3's XML with S3's codes.
func TestS3AuthErrorShape(t *testing.T) {
	for code, want := range map[string]string{
		"InvalidSignatureException":           "SignatureDoesNotMatch",
		"UnrecognizedClientException":         "InvalidAccessKeyId",
		"MissingAuthenticationTokenException": "AccessDenied",
		"XAmzContentSHA256Mismatch":           "XAmzContentSHA256Mismatch",
	} {
		r := httptest.NewRequest("PUT", "/bucket/key", nil)
		r.Header.Set("Authorization", authFor("s3"))
		r.Header.Set("X-Amz-Date", "20260101T000000Z")
		w := httptest.NewRecorder()
		failIn(func(http.ResponseWriter, *http.Request, error) { t.Fatal("answered as JSON") })(w, r,
			&access.AuthError{Status: 403, Code: code, Message: "no"})
		var body struct{ Code string }
		if err := xml.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Code != want || w.Code != 403 {
			t.Errorf("%s: %d %q (%v), want 403 %s", code, w.Code, w.Body.String(), err, want)
		}
	}
}

// Ensure a server that serves no S3 (it uses --s3-endpoint's) says so to
// an S3 request instead of answering it as one of its own routes.
func TestNoBuiltinS3Answer(t *testing.T) {
	h := s3Split{rest: http.NotFoundHandler(), endpoint: "http://minio:9000"}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", authFor("s3"))
	r.Header.Set("X-Amz-Date", "20260101T000000Z")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var body struct{ Code, Message string }
	xml.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != http.StatusNotImplemented || body.Code != "NotImplemented" {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}
