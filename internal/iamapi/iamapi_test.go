package iamapi_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/iamapi"
)

// Ensure every IAM operation is refused as IAM refuses one: 403, an
// ErrorResponse document whose code is AccessDenied and whose message names
// the caller, the action and the resource.
func TestRefusesEverything(t *testing.T) {
	alice := access.Identity{AccessKeyID: "SKIAA", Principal: "arn:aws:iam::000000000000:user/alice"}
	srv := httptest.NewServer(access.Middleware(iamapi.Handler, access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) {
		return alice, nil
	}), nil))
	defer srv.Close()
	for form, want := range map[string]string{
		"Action=GetRole&RoleName=SageMakerRole&Version=2010-05-08":                         "iam:GetRole on resource: role/SageMakerRole",
		"Action=SimulatePrincipalPolicy&PolicySourceArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fr": "iam:SimulatePrincipalPolicy on resource: arn:aws:iam::1:role/r",
		"Action=ListRoles&Version=2010-05-08":                                              "iam:ListRoles on resource: *",
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		if !iamapi.IsQuery(req) {
			t.Errorf("%s: not a query request", form)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var doc struct {
			Error struct{ Type, Code, Message string }
		}
		if err := xml.Unmarshal(b, &doc); err != nil || resp.StatusCode != 403 || doc.Error.Code != "AccessDenied" || doc.Error.Type != "Sender" ||
			!strings.Contains(doc.Error.Message, "User: "+alice.Principal+" is not authorized to perform: "+want) {
			t.Errorf("%s: %d %s (%v)", form, resp.StatusCode, b, err)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(url.Values{"a": {"b"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	if iamapi.IsQuery(req) {
		t.Errorf("a JSON request taken for a query")
	}
}
