package s3server

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzKeyPath checks the invariant that keeps keys inside their bucket:
// every key S3 takes maps to a local path (no "..", not absolute) that
// ends in the object suffix and decodes back to the key, segment by
// segment.
func FuzzKeyPath(f *testing.F) {
	for _, k := range []string{"a", "../x", "/abs", "a//b", ".", "..", "a/./b", "%2e%2e/x", "dir/", "a#o/b", "é/ü", "\x00"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p, err := keyPath(key)
		if err != nil {
			return
		}
		if !filepath.IsLocal(p) || !strings.HasSuffix(p, objectSuffix) {
			t.Fatalf("key %q maps to %q", key, p)
		}
		segs := strings.Split(strings.TrimSuffix(p, objectSuffix), string(filepath.Separator))
		var back []string
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.Contains(s, "#") {
				t.Fatalf("key %q: segment %q of %q", key, s, p)
			}
			d, ok := unescapeSegment(s)
			if !ok {
				t.Fatalf("key %q: segment %q does not decode", key, s)
			}
			back = append(back, d)
		}
		if got := strings.Join(back, "/"); got != key {
			t.Fatalf("key %q comes back as %q from %q", key, got, p)
		}
	})
}

// FuzzChunkReader decodes arbitrary bodies as aws-chunked without
// panicking or reading without end, and decodes what it encodes.
func FuzzChunkReader(f *testing.F) {
	f.Add([]byte("hello world"), uint16(4), []byte(""))
	f.Add([]byte(""), uint16(1), []byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"))
	f.Add([]byte("x"), uint16(0), []byte("ffffffffffffffff\r\nx"))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, raw []byte) {
		io.Copy(io.Discard, io.LimitReader(newChunkReader(bytes.NewReader(raw)), 1<<20))
		n := int(size%64) + 1
		var enc bytes.Buffer
		for i := 0; i < len(data); i += n {
			chunk := data[i:min(i+n, len(data))]
			fmt.Fprintf(&enc, "%x\r\n%s\r\n", len(chunk), chunk)
		}
		enc.WriteString("0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n")
		cr := newChunkReader(&enc)
		got, err := io.ReadAll(cr)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("decoded %q (%v), want %q", got, err, data)
		}
		if cr.trailers.Get("x-amz-checksum-crc32") != "AAAAAA==" {
			t.Fatalf("trailers %v", cr.trailers)
		}
	})
}
