package batchapi

import (
	"net/http"
	"testing"
)

// The checks of an answer, shared with the tests of package batchapi_test,
// which see the API through testserver (that package imports this one, so
// these tests cannot import it).

// WantRawError is wantRawError of an answer given as its status, header
// and body.
func WantRawError(t *testing.T, status int, header http.Header, body string, wantStatus int, code, want string) {
	t.Helper()
	wantRawError(t, rawResponse{status, header, body}, wantStatus, code, want)
}

// ClientExceptionIs and WantClientException check the SDK's errors.
var (
	ClientExceptionIs   = clientExceptionIs
	WantClientException = wantClientException
)
