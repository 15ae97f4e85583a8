package s3server

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/sharq-dev/sharq/internal/access"
)

// received is what receive learnt of a body it stored.
type received struct {
	size int64
	md5  []byte
}

func (r received) etag() string { return `"` + hex.EncodeToString(r.md5) + `"` }

// checksums are the whole-body checksums S3 clients send, by the name of
// their header (x-amz-checksum-NAME).
var checksums = map[string]func() hash.Hash{
	"crc32":     func() hash.Hash { return crc32.NewIEEE() },
	"crc32c":    func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"crc64nvme": func() hash.Hash { return crc64.New(crc64NVME) },
	"sha1":      sha1.New,
	"sha256":    sha256.New,
}

var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// copyBuffers are the buffers bodies are copied through: few, large
// writes to the file, and memory bounded by the requests in flight.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// receive streams r's body into a new file in dir and checks it: its
// length against Content-Length (or x-amz-decoded-content-length for an
// aws-chunked body), Content-MD5, and the x-amz-checksum-* value in a
// header or trailer. On success the caller owns f (written, open, at its
// end); on failure f is removed.
func receive(r *http.Request, dir string, max int64) (f *os.File, got received, err error) {
	body, want, err := decodedBody(r)
	if err != nil {
		return nil, received{}, err
	}
	if want > max {
		return nil, received{}, errEntityTooLarge
	}
	algo, hashFn := checksumOf(r)
	file, err := os.CreateTemp(dir, "body-*")
	if err != nil {
		return nil, received{}, err
	}
	defer func() {
		if err != nil {
			file.Close()
			os.Remove(file.Name())
		}
	}()
	m := md5.New()
	ws := []io.Writer{m}
	var sum hash.Hash
	if hashFn != nil {
		sum = hashFn()
		ws = append(ws, sum)
	}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// A reader that stops one byte past the declared length tells a body
	// too long from one of the right length.
	n, err := io.CopyBuffer(struct{ io.Writer }{io.MultiWriter(append(ws, diskWriter{file})...)}, io.LimitReader(body, want+1), *buf)
	if err != nil {
		return nil, received{}, bodyError(err)
	}
	if n != want {
		return nil, received{}, errIncompleteBody
	}
	got = received{size: n, md5: m.Sum(nil)}
	if err := checkMD5(r, got.md5); err != nil {
		return nil, received{}, err
	}
	if sum != nil {
		claimed := r.Header.Get("X-Amz-Checksum-" + algo)
		if cr, ok := body.(*chunkReader); ok && claimed == "" {
			claimed = cr.trailers.Get("x-amz-checksum-" + algo)
		}
		if claimed != "" && claimed != base64.StdEncoding.EncodeToString(sum.Sum(nil)) {
			return nil, received{}, errorf(http.StatusBadRequest, "BadDigest",
				"The %s you specified did not match the calculated checksum.", strings.ToUpper(algo))
		}
	}
	return file, got, nil
}

// decodedBody is r's body without its aws-chunked framing, and the number
// of bytes it must hold.
func decodedBody(r *http.Request) (io.Reader, int64, error) {
	// Only a STREAMING- payload is framed: taking the framing from
	// Content-Encoding alone would let a body signed by its SHA-256 be
	// swapped for a framed one the hash no longer covers.
	chunked := strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-")
	if !chunked && strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		return nil, 0, errInvalidArgument("An aws-chunked body needs a STREAMING- x-amz-content-sha256")
	}
	if !chunked {
		if r.ContentLength < 0 {
			return nil, 0, errMissingLength
		}
		return r.Body, r.ContentLength, nil
	}
	n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return nil, 0, errMissingLength
	}
	return newChunkReader(r.Body), n, nil
}

// checksumOf is the checksum r's client computed over its body: its name
// and hash, or "" and nil for none (or one this server does not know).
func checksumOf(r *http.Request) (string, func() hash.Hash) {
	names := []string{strings.ToLower(r.Header.Get("X-Amz-Sdk-Checksum-Algorithm"))}
	if t, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(r.Header.Get("X-Amz-Trailer"))), "x-amz-checksum-"); ok {
		names = append(names, t)
	}
	for name := range checksums {
		if r.Header.Get("X-Amz-Checksum-"+name) != "" {
			names = append(names, name)
		}
	}
	for _, n := range names {
		if h, ok := checksums[n]; ok {
			return n, h
		}
	}
	return "", nil
}

// checkMD5 compares the body's MD5 with Content-MD5, when sent.
func checkMD5(r *http.Request, sum []byte) error {
	claimed := r.Header.Get("Content-MD5")
	if claimed == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(claimed)
	if err != nil || len(b) != md5.Size {
		return errInvalidDigest
	}
	if string(b) != string(sum) {
		return errBadDigest
	}
	return nil
}

// bodyError is the S3 answer to a body that could not be read: one that
// ended early, a payload hash or chunk signature that did not hold, or a
// malformed framing.
func bodyError(err error) error {
	var s3err *Error
	var auth *access.AuthError
	var disk diskError
	switch {
	case errors.As(err, &s3err), errors.As(err, &auth), errors.As(err, &disk):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errIncompleteBody
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return errEntityTooLarge
	}
	return errIncompleteBody
}

// diskWriter marks the errors of writing the file, which are the
// server's, apart from those of reading the body, which are the client's.
type diskWriter struct{ f *os.File }

func (w diskWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = diskError{err}
	}
	return n, err
}

type diskError struct{ error }

func (e diskError) Unwrap() error { return e.error }
