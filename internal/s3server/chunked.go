package s3server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sharq-dev/sharq/internal/access/sigv4"
)

// maxChunkLine bounds a chunk's header line and each trailer line.
const maxChunkLine = 4096

var errChunkFormat = errorf(http.StatusBadRequest, "IncompleteBody", "The aws-chunked body is malformed.")

// chunkReader decodes an aws-chunked body:
//
//	SIZE-IN-HEX[;chunk-signature=SIG]\r\n DATA \r\n ... 0[;chunk-signature=SIG]\r\n [TRAILER:VALUE\r\n ...] \r\n
//
// With a ChunkSigner (a STREAMING-AWS4-HMAC-SHA256-PAYLOAD body that
// sigv4 authenticated) each chunk's signature, and the trailer's, must
// hold; the last Read of a chunk whose signature does not fails.
type chunkReader struct {
	br       *bufio.Reader
	verify   *sigv4.ChunkSigner
	left     int64 // bytes of the current chunk not yet read
	sig      string
	h        hash.Hash
	done     bool
	trailers http.Header
}

func newChunkReader(body io.Reader) *chunkReader {
	c := &chunkReader{br: bufio.NewReaderSize(body, 64<<10), trailers: http.Header{}}
	if sb, ok := body.(*sigv4.StreamBody); ok {
		c.verify, c.h = sb.Chunks, sha256.New()
	}
	return c
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for c.left == 0 {
		if c.done {
			return 0, io.EOF
		}
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	if c.h != nil {
		c.h.Write(p[:n])
	}
	if errors.Is(err, io.EOF) {
		return n, io.ErrUnexpectedEOF
	}
	if err != nil {
		return n, err
	}
	if c.left == 0 {
		if err := c.endChunk(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// next reads a chunk's header line; a chunk of size 0 ends the data and
// is followed by the trailers.
func (c *chunkReader) next() error {
	line, err := c.line()
	if err != nil {
		return err
	}
	size, ext, _ := strings.Cut(line, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 {
		return errChunkFormat
	}
	c.sig = ""
	if v, ok := strings.CutPrefix(strings.TrimSpace(ext), "chunk-signature="); ok {
		c.sig = v
	}
	if c.verify != nil && c.sig == "" {
		return errSignature
	}
	if n > 0 {
		c.left = n
		return nil
	}
	if c.verify != nil && !c.verify.VerifyChunk(sha256.New().Sum(nil), c.sig) {
		return errSignature
	}
	c.done = true
	return c.readTrailers()
}

// endChunk reads the CRLF after a chunk's data and checks its signature.
func (c *chunkReader) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		return io.ErrUnexpectedEOF
	}
	if crlf != [2]byte{'\r', '\n'} {
		return errChunkFormat
	}
	if c.verify != nil {
		if !c.verify.VerifyChunk(c.h.Sum(nil), c.sig) {
			return errSignature
		}
		c.h.Reset()
	}
	return nil
}

// readTrailers reads "name:value" lines up to an empty line or the end of
// the body, checking x-amz-trailer-signature over the others.
func (c *chunkReader) readTrailers() error {
	var signed bytes.Buffer
	trailerSig := ""
	for {
		line, err := c.line()
		if errors.Is(err, io.ErrUnexpectedEOF) && line == "" {
			break // no closing CRLF: some clients end right after the trailers
		}
		if err != nil {
			return err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return errChunkFormat
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			trailerSig = value
			continue
		}
		c.trailers.Set(name, value)
		signed.WriteString(name + ":" + value + "\n")
	}
	if c.verify != nil && signed.Len() > 0 {
		sum := sha256.Sum256(signed.Bytes())
		if trailerSig == "" || !c.verify.VerifyTrailer(sum[:], trailerSig) {
			return errSignature
		}
	}
	return nil
}

// line reads one CRLF-terminated line, without the CRLF.
func (c *chunkReader) line() (string, error) {
	var b []byte
	for {
		part, isPrefix, err := c.br.ReadLine()
		b = append(b, part...)
		if len(b) > maxChunkLine {
			return "", errChunkFormat
		}
		if err == io.EOF {
			if len(b) > 0 {
				return string(b), nil
			}
			return "", io.ErrUnexpectedEOF
		}
		if err != nil {
			return "", err
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}
