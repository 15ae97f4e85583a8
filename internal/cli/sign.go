package cli

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
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

func newSigningTransport(base http.RoundTripper, creds aws.CredentialsProvider, region string) *signingTransport {
	return &signingTransport{base: base, creds: creds, region: region, signer: v4.NewSigner()}
}

// caBundleTransport trusts the certificates of $AWS_CA_BUNDLE as well as
// the system's, as the AWS CLI and SDKs do (a server with its own CA).
func caBundleTransport() (http.RoundTripper, error) {
	file := os.Getenv("AWS_CA_BUNDLE")
	if file == "" {
		return http.DefaultTransport, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("AWS_CA_BUNDLE: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("AWS_CA_BUNDLE %s: no PEM certificate in it", file)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool}
	return t, nil
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
