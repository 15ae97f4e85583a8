package batchapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/arn"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testserver"
)

// The tests of this file's package see the API as a client does, in front
// of the real engine (testserver); those of package batchapi check what
// only a fake engine can show.

const (
	testRegion  = "us-east-1"
	testAccount = "123456789012"
)

var testBase = arn.Base{Partition: "aws", Region: testRegion, AccountID: testAccount}

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

// rawResponse is a response read in full.
type rawResponse struct {
	status int
	header http.Header
	body   string
}

// do sends a raw request, for what the SDK would refuse to send.
func do(t *testing.T, srv *testserver.Server, method, path, body string) rawResponse {
	t.Helper()
	r := srv.Do(t, method, path, body)
	return rawResponse{r.Status, r.Header, r.Body}
}

// wantRawError checks an error answer's status, error type and message.
func wantRawError(t *testing.T, r rawResponse, status int, code, want string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %s)", r.status, status, r.body)
	}
	if got := r.header.Get("X-Amzn-ErrorType"); got != code {
		t.Errorf("X-Amzn-ErrorType = %q, want %q", got, code)
	}
	var body struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if body.Type != code || !strings.Contains(body.Message, want) {
		t.Errorf("body = %s, want __type %s and a message containing %q", r.body, code, want)
	}
}

// clientExceptionIs checks that an SDK error is a ClientException of
// exactly msg.
func clientExceptionIs(msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var ce *types.ClientException
		if !errors.As(err, &ce) || ce.ErrorMessage() != msg {
			t.Errorf("got %v, want ClientException %q", err, msg)
		}
	}
}

// wantClientException checks that err is a ClientException, as the SDK
// decodes it, whose message contains want.
func wantClientException(t *testing.T, err error, want string) {
	t.Helper()
	var ce *types.ClientException
	if !errors.As(err, &ce) {
		t.Fatalf("got error %v (%T), want a ClientException containing %q", err, err, want)
	}
	if !strings.Contains(ce.ErrorMessage(), want) {
		t.Errorf("ClientException message %q does not contain %q", ce.ErrorMessage(), want)
	}
}
