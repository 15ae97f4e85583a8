package sharqapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// Ensure keys are created through the routes with their secret shown
// once, listed without it, disabled, enabled and deleted, and bad
// requests (a policy that does not exist among them) change nothing.
func TestKeyRoutes(t *testing.T) {
	keys := &accesstest.Keys{}
	ring, err := access.NewKeyring(keys, make([]byte, access.ServerKeySize), "000000000000")
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, sharqapi.Options{Keyring: ring})
	wantError(t, s.do("POST", sharqapi.KeysPath, `{"name":"team-a","policies":["team-a"]}`), http.StatusBadRequest, `no such access policy "team-a"`)
	keys.PutPolicy(t.Context(), access.Policy{Name: "team-a", Document: []byte(`{"Statement":[]}`)})
	var k sharqapi.AccessKey
	s.get("POST", sharqapi.KeysPath, `{"name":"team-a","policies":["team-a"]}`, &k)
	if k.Name != "team-a" || !strings.HasPrefix(k.AccessKeyID, "SKIA") || len(k.SecretAccessKey) != 40 || k.Status != "Active" {
		t.Fatalf("created %+v", k)
	}
	if cred, err := ring.Credential(t.Context(), k.AccessKeyID); err != nil || cred.Secret != k.SecretAccessKey {
		t.Errorf("the key's credential: %+v, %v", cred, err)
	}
	wantError(t, s.do("POST", sharqapi.KeysPath, `{"name":"team-a"}`), http.StatusConflict, "exists")
	wantError(t, s.do("POST", sharqapi.KeysPath, `{"name":"a b"}`), http.StatusBadRequest, "invalid key name")
	wantError(t, s.do("POST", sharqapi.KeysPath, `{"name":"b","policies":["a/b"]}`), http.StatusBadRequest, "policy name")
	wantError(t, s.do("POST", sharqapi.KeysPath, `{"name":"b","secret":"x"}`), http.StatusBadRequest, "unknown field")
	if r := s.do("POST", sharqapi.KeysPath+"/"+k.AccessKeyID+"/disable", ""); r.status != http.StatusNoContent {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	var list []sharqapi.AccessKey
	s.get("GET", sharqapi.KeysPath, "", &list)
	if len(list) != 1 || list[0].Status != "Inactive" || list[0].SecretAccessKey != "" {
		t.Errorf("listed %+v", list)
	}
	if r := s.do("DELETE", sharqapi.KeysPath+"/"+k.AccessKeyID, ""); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, s.do("POST", sharqapi.KeysPath+"/"+k.AccessKeyID+"/enable", ""), http.StatusNotFound, "no access key")
}
