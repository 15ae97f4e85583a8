package testserver_test

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/testserver"
)

// Ensure the server answers every family of routes serve mounts, runs
// jobs of the configuration it was given, and its SDK client reads them.
func TestServesWhatServeMounts(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Config: "../../examples/announcement.yaml"})
	id := s.Submit(t, "my-sm-training-qm-jq", "high", "QS1", 3)
	if j := s.WaitStatus(t, id, "RUNNING"); j.JobName != "high" {
		t.Errorf("job %+v", j)
	}
	out, err := s.BatchClient().DescribeServiceJob(t.Context(), &batch.DescribeServiceJobInput{JobId: aws.String(id)})
	if err != nil || out.Status != "RUNNING" {
		t.Fatalf("DescribeServiceJob through the SDK: %v, %v", out, err)
	}
	for _, rq := range []struct{ method, path, body, want string }{
		{"POST", "/v1/listservicejobs", `{"jobQueue":"my-sm-training-qm-jq"}`, id},
		{"GET", "/sharq/v1/shares?queue=my-sm-training-qm-jq", "", "QS1"},
		{"GET", "/sharq/v1/console/state", "", "QS1"},
		{"GET", "/metrics", "", "sharq_"},
		{"GET", "/", "", "<html"},
	} {
		if r := s.Do(t, rq.method, rq.path, rq.body); r.Status != 200 || !strings.Contains(r.Body, rq.want) {
			t.Errorf("%s %s: %d %.200s, want 200 with %q", rq.method, rq.path, r.Status, r.Body, rq.want)
		}
	}
}

// Ensure an authenticator puts the middleware in front of every route,
// its refusals answered as the AWS Batch API does.
func TestAuthenticatorGuardsTheRoutes(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Authenticator: access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) {
		return access.Identity{}, errors.New("no key")
	})})
	for _, path := range []string{"/v1/listservicejobs", "/sharq/v1/shares"} {
		if r := s.Do(t, "POST", path, "{}"); r.Status < 400 || r.Header.Get("X-Amzn-ErrorType") == "" {
			t.Errorf("%s: %d %s, want a refusal", path, r.Status, r.Body)
		}
	}
}

// Ensure no program or package but tests imports the test server.
func TestImportedOnlyByTests(t *testing.T) {
	const self = "github.com/sharq-dev/sharq/internal/testserver"
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == strconv.Quote(self) {
				t.Errorf("%s imports the test server", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
