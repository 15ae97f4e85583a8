package s3server_test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/access/sigv4/sigv4test"
	"github.com/sharq-dev/sharq/internal/s3server"
)

// Ensure a body signed chunk by chunk is stored when every chunk's
// signature holds (AWS's own example), and refused, storing nothing, when
// one chunk's data was changed on the way.
func TestSignedChunks(t *testing.T) {
	srv, err := s3server.New(s3server.Options{Dir: t.TempDir()})
	fatalIf(t, "new", err)
	verifier := sigv4.New(sigv4.Options{Credentials: sigv4test.DocKey, Services: []string{"s3"},
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
	if status, code := send(sigv4test.DocChunked(tampered, sigv4test.DocChunkSigs)); status != http.StatusForbidden || code != "SignatureDoesNotMatch" {
		t.Fatalf("tampered chunk: %d %s, want 403 SignatureDoesNotMatch", status, code)
	}
	get := httptest.NewRequest(http.MethodGet, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", nil)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, get)
	if w.Code != http.StatusNotFound {
		t.Fatalf("after the tampered PUT the object answers %d", w.Code)
	}

	if status, code := send(sigv4test.DocChunked(sigv4test.DocChunks, sigv4test.DocChunkSigs)); status != http.StatusOK {
		t.Fatalf("AWS's example: %d %s", status, code)
	}
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", nil))
	if w.Body.String() != strings.Repeat("a", 66560) {
		t.Fatalf("stored %d bytes, want 66560 of a", w.Body.Len())
	}
}
