package s3server_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/s3server"
)

// docKeys holds the key of AWS's documented examples.
type docKeys struct{}

func (docKeys) Credential(_ context.Context, id string) (access.Credential, error) {
	if id != "AKIAIOSFODNN7EXAMPLE" {
		return access.Credential{}, access.ErrUnknownKey
	}
	return access.Credential{Identity: access.Identity{AccessKeyID: id, Principal: alice},
		Secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, nil
}

// docChunked is AWS's example of a body signed chunk by chunk
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), with its chunks' data.
func docChunked(data [3]string) *http.Request {
	sigs := []string{
		"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
		"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
		"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
	}
	var b bytes.Buffer
	for i, d := range data {
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", len(d), sigs[i], d)
	}
	r := httptest.NewRequest(http.MethodPut, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", bytes.NewReader(b.Bytes()))
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", sigv4.StreamingSigned)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"+
		"SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,"+
		"Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	return r
}

// Ensure a body signed chunk by chunk is stored when every chunk's
// signature holds (AWS's own example), and refused, storing nothing, when
// one chunk's data was changed on the way.
func TestSignedChunks(t *testing.T) {
	srv, err := s3server.New(s3server.Options{Dir: t.TempDir()})
	fatalIf(t, "new", err)
	verifier := sigv4.New(sigv4.Options{Credentials: docKeys{}, Services: []string{"s3"},
		Now: func() time.Time { return time.Date(2013, 5, 24, 0, 1, 0, 0, time.UTC) }})
	h := access.Middleware(srv, verifier, func(w http.ResponseWriter, r *http.Request, err error) {
		t.Errorf("authentication: %v", err)
		w.WriteHeader(http.StatusForbidden)
	})
	send := func(r *http.Request) (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body struct{ Code string }
		xml.Unmarshal(w.Body.Bytes(), &body)
		return w.Code, body.Code
	}
	create := httptest.NewRequest(http.MethodPut, "http://s3.amazonaws.com/examplebucket", nil)
	srv.ServeHTTP(httptest.NewRecorder(), create)

	tampered := [3]string{strings.Repeat("a", 65536), strings.Repeat("a", 1023) + "b", ""}
	if status, code := send(docChunked(tampered)); status != http.StatusForbidden || code != "SignatureDoesNotMatch" {
		t.Fatalf("tampered chunk: %d %s, want 403 SignatureDoesNotMatch", status, code)
	}
	get := httptest.NewRequest(http.MethodGet, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", nil)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, get)
	if w.Code != http.StatusNotFound {
		t.Fatalf("after the tampered PUT the object answers %d", w.Code)
	}

	good := [3]string{strings.Repeat("a", 65536), strings.Repeat("a", 1024), ""}
	if status, code := send(docChunked(good)); status != http.StatusOK {
		t.Fatalf("AWS's example: %d %s", status, code)
	}
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", nil))
	if w.Body.String() != strings.Repeat("a", 66560) {
		t.Fatalf("stored %d bytes, want 66560 of a", w.Body.Len())
	}
}
