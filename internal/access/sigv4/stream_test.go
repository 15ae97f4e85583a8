package sigv4_test

import (
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

	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/access/sigv4/sigv4test"
)

func docVerifier() *sigv4.Verifier {
	return sigv4.New(sigv4.Options{Credentials: sigv4test.DocKey, Services: []string{"s3"},
		Now: func() time.Time { return time.Date(2013, 5, 24, 0, 1, 0, 0, time.UTC) }})
}

// The seed signature of AWS's example holds, and its body is left as it
// came, with the chunk signer to check each chunk by AWS's own values.
func TestStreamingDocExample(t *testing.T) {
	r := sigv4test.DocChunked(sigv4test.DocChunks, sigv4test.DocChunkSigs)
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
	for i, data := range sigv4test.DocChunks {
		sum := sha256.Sum256([]byte(data))
		if !sb.Chunks.VerifyChunk(sum[:], sigv4test.DocChunkSigs[i]) {
			t.Fatalf("chunk %d: AWS's signature refused", i)
		}
	}
	// The chain moved on: the first signature does not verify again.
	sum := sha256.Sum256([]byte(sigv4test.DocChunks[0]))
	if sb.Chunks.VerifyChunk(sum[:], sigv4test.DocChunkSigs[0]) {
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
			if _, err := sigv4.New(sigv4.Options{Credentials: keys, Services: []string{"s3"}}).Authenticate(r); err != nil {
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
