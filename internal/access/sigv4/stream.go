package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"regexp"

	"github.com/sharq-dev/sharq/internal/access"
)

// The payload hashes S3's clients send in X-Amz-Content-Sha256 instead of
// the body's SHA-256.
const (
	StreamingSigned          = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingSignedTrailer   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	UnsignedPayload          = unsignedPayload
)

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// emptySHA256 is the hex SHA-256 of nothing, which every chunk's string
// to sign holds in place of a header hash.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// ChunkSigner checks the signatures of an aws-chunked body signed with
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD: each chunk's signature chains from
// the one before, starting at the request's own (the seed).
type ChunkSigner struct {
	key      []byte
	amzDate  string
	scope    string
	previous string
}

// VerifyChunk tells whether sig signs a chunk whose data hashes to
// dataSHA256, and moves the chain on when it does.
func (c *ChunkSigner) VerifyChunk(dataSHA256 []byte, sig string) bool {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.amzDate + "\n" + c.scope + "\n" + c.previous + "\n" +
		emptySHA256 + "\n" + hex.EncodeToString(dataSHA256)
	return c.check(sts, sig)
}

// VerifyTrailer tells whether sig signs the trailing headers, given as
// the SHA-256 of their "name:value\n" lines.
func (c *ChunkSigner) VerifyTrailer(trailerSHA256 []byte, sig string) bool {
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + c.amzDate + "\n" + c.scope + "\n" + c.previous + "\n" + hex.EncodeToString(trailerSHA256)
	return c.check(sts, sig)
}

func (c *ChunkSigner) check(stringToSign, sig string) bool {
	want := hex.EncodeToString(hmacSHA256(c.key, stringToSign))
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return false
	}
	c.previous = sig
	return true
}

// StreamBody is the body of an S3 request signed with
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER), as Authenticate leaves it:
// still aws-chunked; its reader checks each chunk with Chunks.
type StreamBody struct {
	io.ReadCloser
	Chunks *ChunkSigner
}

// hashedBody is an S3 request's body whose SHA-256 the client signed: its
// last Read fails when the body does not hash to what was signed, so the
// server never keeps what it read.
type hashedBody struct {
	io.ReadCloser
	h    hash.Hash
	want string
}

// ErrPayloadHash is the S3 refusal of a body whose SHA-256 is not the
// signed one, returned by its last Read.
var ErrPayloadHash = &access.AuthError{Status: http.StatusBadRequest, Code: "XAmzContentSHA256Mismatch",
	Message: "The provided 'x-amz-content-sha256' header does not match what was computed."}

func (b *hashedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.Write(p[:n])
	if err == io.EOF && hex.EncodeToString(b.h.Sum(nil)) != b.want {
		return n, ErrPayloadHash
	}
	return n, err
}

// s3Payload is the payload hash an S3 request's signature covers, as its
// X-Amz-Content-Sha256 says; S3's bodies may be gigabytes and are not read
// here: a signed hash is checked as the body is read (hashedBody), a
// signed stream chunk by chunk (StreamBody, once the seed signature holds).
func s3Payload(r *http.Request, s *signature) (string, error) {
	claimed := r.Header.Get("X-Amz-Content-Sha256")
	switch {
	case claimed == "" && s.presigned, claimed == unsignedPayload, claimed == StreamingUnsignedTrailer:
		return ifEmpty(claimed, unsignedPayload), nil
	case claimed == StreamingSigned, claimed == StreamingSignedTrailer:
		return claimed, nil
	case hexSHA256.MatchString(claimed):
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &hashedBody{ReadCloser: r.Body, h: sha256.New(), want: claimed}
		} else if claimed != emptySHA256 {
			return "", ErrPayloadHash
		}
		return claimed, nil
	case claimed == "":
		return "", &access.AuthError{Status: http.StatusBadRequest, Code: "InvalidRequest",
			Message: "Missing required header for this request: x-amz-content-sha256"}
	}
	return "", &access.AuthError{Status: http.StatusBadRequest, Code: "InvalidArgument",
		Message: "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, " +
			"STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER) or a valid sha256 value."}
}

func ifEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// streamBody wraps r's body for its chunks' signatures to be checked, when
// r's payload is a signed stream; seed is r's checked signature.
func streamBody(r *http.Request, s *signature, secret, payload string) {
	if payload != StreamingSigned && payload != StreamingSignedTrailer {
		return
	}
	scope := s.scopeDate + "/" + s.region + "/" + s.service + "/" + terminator
	r.Body = &StreamBody{ReadCloser: r.Body, Chunks: &ChunkSigner{
		key: signingKey(secret, s.scopeDate, s.region, s.service), amzDate: s.date.UTC().Format(amzDateFormat),
		scope: scope, previous: s.sig}}
}

// signingKey derives SigV4's key for one day, region and service.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, terminator)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
