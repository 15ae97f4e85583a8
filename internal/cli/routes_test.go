package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// Ensure sharq's routes answer bad requests and unknown jobs and paths
// with a status and a JSON message, as the CLI expects.
func TestSharqRoutes(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--", "train")

	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	message := func(body string) string {
		var e sharqapi.Error
		json.Unmarshal([]byte(body), &e)
		return e.Message
	}

	code, body := call("POST", "/sharq/v1/jobs/positions", "{")
	if code != 400 || !strings.Contains(message(body), "not a positions request") {
		t.Errorf("bad body: %d %s", code, body)
	}
	ids := `"` + strings.Repeat(`x","`, sharqapi.MaxPositions) + `x"`
	if code, body = call("POST", "/sharq/v1/jobs/positions", `{"jobIds":[`+ids+`]}`); code != 400 {
		t.Errorf("too many jobs: %d %s", code, body)
	}
	code, body = call("POST", "/sharq/v1/jobs/positions", `{"jobIds":["`+jobID(1)+`","nosuch"]}`)
	var p sharqapi.Positions
	if err := json.Unmarshal([]byte(body), &p); err != nil || code != 200 || len(p.Jobs) != 1 || len(p.Unknown) != 1 || p.Unknown[0] != "nosuch" {
		t.Errorf("positions: %d %s", code, body)
	}
	if code, body = call("GET", "/sharq/v1/jobs/nosuch/events", ""); code != 404 || !strings.Contains(message(body), "does not exist") {
		t.Errorf("events of an unknown job: %d %s", code, body)
	}
	if code, body = call("GET", "/sharq/v1/nope", ""); code != 404 || !strings.Contains(message(body), "no such sharq route") {
		t.Errorf("unknown route: %d %s", code, body)
	}
}
