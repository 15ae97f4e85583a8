package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// signingTransport signs requests to sharq's own routes with SigV4, as
// the Batch client signs its own: a server that checks signatures checks
// them on every route.
type signingTransport struct {
	base   http.RoundTripper
	creds  aws.CredentialsProvider
	region string
	signer *v4.Signer
}

func newSigningTransport(creds aws.CredentialsProvider, region string) *signingTransport {
	return &signingTransport{base: http.DefaultTransport, creds: creds, region: region, signer: v4.NewSigner()}
}

func (t *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	cred, err := t.creds.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	// NB: a RoundTripper must not change the request it is given.
	out := req.Clone(req.Context())
	out.Header.Del("Authorization")
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	sum := sha256.Sum256(body)
	if err := t.signer.SignHTTP(req.Context(), cred, out, hex.EncodeToString(sum[:]), "batch", t.region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign request: %w", err)
	}
	return t.base.RoundTrip(out)
}
