package batchapi_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testserver"
)

// The tests of this file's package see the API as a client does, in front
// of the real engine (testserver); those of package batchapi check what
// only a fake engine can show.

// The region, account and ARN base are package batchapi's
// (export_test.go).
const (
	testRegion  = batchapi.TestRegion
	testAccount = batchapi.TestAccount
)

var testBase = batchapi.TestBase

// newEngineServer serves the API in front of a real engine over a SQLite
// store in a temp dir, running attempts on the simulated executor.
func newEngineServer(t *testing.T) (*testserver.Server, *batch.Client) {
	t.Helper()
	return newEngineServerWith(t, nil)
}

// newEngineServerWith is newEngineServer with the simulated executor
// passed through wrap, when not nil, on its way to the engine.
func newEngineServerWith(t *testing.T, wrap func(executor.Executor) executor.Executor) (*testserver.Server, *batch.Client) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{Region: testRegion, AccountID: testAccount, WrapExecutor: wrap})
	return srv, srv.BatchClient()
}

// The checks of an answer are package batchapi's (export_test.go).
var (
	clientExceptionIs   = batchapi.ClientExceptionIs
	wantClientException = batchapi.WantClientException
)

// wantRawError checks an error answer's status, error type and message.
func wantRawError(t *testing.T, r testserver.Response, status int, code, want string) {
	t.Helper()
	batchapi.WantRawError(t, r.Status, r.Header, r.Body, status, code, want)
}
