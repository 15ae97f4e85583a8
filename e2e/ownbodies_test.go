package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// sdkBody stands for smithy-go's request body, which answers io.EOF once
// the SDK has closed it. net/http's last check of a body it has sent goes
// through WriteTo; drained counts those calls.
type sdkBody struct {
	*strings.Reader
	drained atomic.Int32
}

func (b *sdkBody) WriteTo(w io.Writer) (int64, error) {
	b.drained.Add(1)
	return b.Reader.WriteTo(w)
}

func (b *sdkBody) Close() error { return nil }

// Ensure the tests' SDK clients send a copy of each request body, so that
// net/http never reads the SDK's own body after sending it, when the SDK
// may have closed it already (see ownBodies).
func TestOwnBodies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	defer srv.Close()
	const sent = `{"jobQueue":"q","maxResults":100}`
	body := &sdkBody{Reader: strings.NewReader(sent)}
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	fatalIf(t, "NewRequest", err)
	req.ContentLength = int64(len(sent))
	resp, err := ownBodies{srv.Client()}.Do(req)
	fatalIf(t, "POST", err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || string(got) != sent {
		t.Errorf("the server got %q (%v), want %q", got, err, sent)
	}
	if n := body.drained.Load(); n != 0 {
		t.Errorf("net/http read the SDK's request body %d times after sending it, want never", n)
	}
}
