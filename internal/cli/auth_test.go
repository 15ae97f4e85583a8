package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
	"github.com/sharq-dev/sharq/internal/testserver"
)

// newSignedServer starts a real server that checks signatures, as sharq
// serve --auth sigv4 does: the engine over a SQLite store, the AWS API
// and sharq's routes behind SigV4 and the keys' policies. It returns the
// server and an administrator's key.
func newSignedServer(t *testing.T) (*server, access.NewKey) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sharq.db"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := access.NewKeyring(st.Keys(), make([]byte, access.ServerKeySize), "000000000000")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ring.Create(t.Context(), "admin", []string{"AdministratorAccess"})
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Options{Store: st, Authorizer: &access.PolicyAuthorizer{Keys: st.Keys()},
		Sharq:         sharqapi.Options{Keys: st.Keys()},
		Authenticator: sigv4.New(sigv4.Options{Credentials: ring, Region: "us-east-1", AllowUnsigned: true})})
	return &server{t: t, url: srv.URL, eng: srv.Engine, keys: st.Keys()}, admin
}

// Ensure a server's refusal of the CLI's signature is said in sharq's
// terms, with how to give a key, through the AWS API (jobs) and sharq's
// own routes (shares): without credentials, and with a key the server
// does not know; and that the administrator's key is taken.
func TestAuthRefusals(t *testing.T) {
	s, admin := newSignedServer(t)
	how := []string{"requires a sharq access key", "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
		"sharq admin keys create --name NAME --policy POLICY -o env", "--profile"}
	check := func(what string, verb verbFunc, why string) {
		t.Helper()
		r := s.run(verb)
		for _, w := range append(how, why) {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", what, r.stderr, w)
			}
		}
		if r.code != ExitFailure || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line", what, r.code, r.stderr)
		}
	}
	check("sharq jobs without credentials", Jobs, "no AWS credentials are configured here (UnrecognizedClientException")
	check("sharq shares without credentials", Shares, "no AWS credentials are configured here (UnrecognizedClientException")

	t.Setenv("AWS_ACCESS_KEY_ID", "SKIANOSUCHKEY0000000")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	check("sharq jobs with an unknown key", Jobs, "does not know the one the request was signed with")
	check("sharq shares with an unknown key", Shares, "does not know the one the request was signed with")

	t.Setenv("AWS_ACCESS_KEY_ID", admin.ID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", admin.Secret)
	s.ok(Shares)
	s.ok(Jobs)
}

// Ensure an unsigned request's refusal (which the AWS CLI or a client
// without a signer meets) is explained too, and other API errors keep
// the server's own message.
func TestClassifyAuthRefusals(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&smithy.GenericAPIError{Code: "MissingAuthenticationTokenException", Message: "Missing Authentication Token"},
			"the sharq server at http://h:1 requires requests signed with a sharq access key (MissingAuthenticationTokenException: Missing Authentication Token). Give one: set AWS_ACCESS_KEY_ID"},
		{&smithy.GenericAPIError{Code: "InvalidClientTokenId", Message: "The security token included in the request is invalid."},
			"requires a sharq access key"},
		{&authRefusedError{code: "MissingAuthenticationTokenException", msg: "Missing Authentication Token"},
			"requires requests signed with a sharq access key"},
		{&smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: x is not authorized"}, "User: x is not authorized"},
	} {
		code, msg := classify(tc.err, "http://h:1")
		if code != ExitFailure || !strings.HasPrefix(msg, tc.want) && !strings.Contains(msg, tc.want) {
			t.Errorf("classify(%v) = %d, %q; want 1 and %q", tc.err, code, msg, tc.want)
		}
	}
	if _, msg := classify(errors.New("x"), "http://h:1"); msg != "x" {
		t.Errorf("a plain error: %q", msg)
	}
}
