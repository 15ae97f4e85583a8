package batchapi

import (
	"net/http"
	"testing"
)

// What the tests of package batchapi_test, which see the API through
// testserver, share with these: the region and account, and the checks of
// an answer (testserver imports this package, so these tests cannot import
// it).

const (
	TestRegion  = testRegion
	TestAccount = testAccount
)

var TestBase = testBase

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
