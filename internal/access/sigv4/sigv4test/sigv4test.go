// Package sigv4test holds what tests of SigV4 need at both ends, the
// verifier and the servers behind it: keys to sign with, and AWS's
// documented example of a body signed chunk by chunk.
package sigv4test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
)

// Key is a credential source that knows one key.
type Key struct{ ID, Secret, Principal string }

// Credential returns k's credential for its ID and access.ErrUnknownKey
// for any other.
func (k Key) Credential(_ context.Context, id string) (access.Credential, error) {
	if id != k.ID {
		return access.Credential{}, access.ErrUnknownKey
	}
	return access.Credential{Identity: access.Identity{AccessKeyID: k.ID, Principal: k.Principal}, Secret: k.Secret}, nil
}

// DocKey is the key of AWS's documented examples.
var DocKey = Key{ID: "AKIAIOSFODNN7EXAMPLE", Secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	Principal: "arn:aws:iam::000000000000:user/alice"}

// DocChunks and DocChunkSigs are the chunks of AWS's example "Signature
// Calculations for the Authorization Header: Transferring Payload in
// Multiple Chunks" (64 KiB and 1 KiB of 'a', then the empty last chunk)
// and their signatures.
var (
	DocChunks    = [3]string{strings.Repeat("a", 65536), strings.Repeat("a", 1024), ""}
	DocChunkSigs = [3]string{
		"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
		"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
		"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
	}
)

// DocChunked is the request of AWS's example with the chunks data, each
// with the signature in sigs: DocChunks and DocChunkSigs make the example
// itself, which no SDK here sends. It is signed by DocKey at 20130524T000000Z.
func DocChunked(data, sigs [3]string) *http.Request {
	var b bytes.Buffer
	for i, d := range data {
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", len(d), sigs[i], d)
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
