package sigv4_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
)

// docKeys holds the key of AWS's documented examples.
type docKeys struct{}

func (docKeys) Credential(_ context.Context, id string) (access.Credential, error) {
	if id != "AKIAIOSFODNN7EXAMPLE" {
		return access.Credential{}, access.ErrUnknownKey
	}
	return access.Credential{Identity: access.Identity{AccessKeyID: id, Principal: alice},
		Secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, nil
}

// docChunked is the request of AWS's example "Signature Calculations for
// the Authorization Header: Transferring Payload in Multiple Chunks": 64
// KiB and 1 KiB of 'a', signed chunk by chunk, which no SDK here sends.
func docChunked(sigs [3]string) *http.Request {
	var b bytes.Buffer
	for i, n := range []int{65536, 1024, 0} {
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", n, sigs[i], strings.Repeat("a", n))
	}
	r := httptest.NewRequest(http.MethodPut, "http://s3.amazonaws.com/examplebucket/chunkObject.txt", bytes.NewReader(b.Bytes()))
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", sigv4.StreamingSigned)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"+
		"SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,"+
		"Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	return r
}

var docSigs = [3]string{
	"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
	"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
	"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
}

func docVerifier() *sigv4.Verifier {
	return sigv4.New(sigv4.Options{Credentials: docKeys{}, Services: []string{"s3"},
		Now: func() time.Time { return time.Date(2013, 5, 24, 0, 1, 0, 0, time.UTC) }})
}

// The seed signature of AWS's example holds, and its body is left as it
// came, with the chunk signer to check each chunk by AWS's own values.
func TestStreamingDocExample(t *testing.T) {
	r := docChunked(docSigs)
	if r.ContentLength != 66824 {
		t.Fatalf("encoded length %d, AWS's example says 66824", r.ContentLength)
	}
	if _, err := docVerifier().Authenticate(r); err != nil {
		t.Fatal(err)
	}
	sb, ok := r.Body.(*sigv4.StreamBody)
	if !ok {
		t.Fatalf("body is %T, want *sigv4.StreamBody", r.Body)
	}
	for i, data := range []string{strings.Repeat("a", 65536), strings.Repeat("a", 1024), ""} {
		sum := sha256.Sum256([]byte(data))
		if !sb.Chunks.VerifyChunk(sum[:], docSigs[i]) {
			t.Fatalf("chunk %d: AWS's signature refused", i)
		}
	}
	// The chain moved on: the first signature does not verify again.
	sum := sha256.Sum256([]byte(strings.Repeat("a", 65536)))
	if sb.Chunks.VerifyChunk(sum[:], docSigs[0]) {
		t.Fatal("a replayed chunk signature was accepted")
	}
}

// An S3 body whose signed SHA-256 does not match fails on its last read,
// and the verifier does not read S3 bodies itself (they may be gigabytes).
func TestS3SignedHashCheckedWhileRead(t *testing.T) {
	body := strings.Repeat("x", 3<<20) // beyond the 1 MiB cap of other services' bodies
	for name, tc := range map[string]struct {
		signedBody string
		wantErr    bool
	}{
		"match":    {signedBody: body},
		"mismatch": {signedBody: body + "y", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			r := signS3(t, body, tc.signedBody)
			if _, err := sigv4.New(sigv4.Options{Credentials: keys{}, Services: []string{"s3"}}).Authenticate(r); err != nil {
				t.Fatal(err)
			}
			_, err := io.ReadAll(r.Body)
			if got := errors.Is(err, sigv4.ErrPayloadHash); got != tc.wantErr {
				t.Fatalf("read error %v, want mismatch %v", err, tc.wantErr)
			}
		})
	}
}

// signS3 signs a PUT of body for S3 claiming the hash of signedBody.
func signS3(t *testing.T, body, signedBody string) *http.Request {
	t.Helper()
	sum := sha256.Sum256([]byte(signedBody))
	hash := fmt.Sprintf("%x", sum)
	r := httptest.NewRequest(http.MethodPut, "http://127.0.0.1/bucket/a%20key+plus", strings.NewReader(body))
	r.Header.Set("X-Amz-Content-Sha256", hash)
	err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, r, hash, "s3", "us-east-1",
		time.Now(), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	return r
}
