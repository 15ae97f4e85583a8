package local

import (
	"bytes"
	"os"
	"strings"
)

// stderrTail returns about the last limit bytes of a log, starting at a line
// when a line break is near, trimmed and valid UTF-8: enough for a person
// to see why a job failed, short enough for a status reason.
func stderrTail(path string, limit int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	// Read more than limit so that trailing blank lines do not eat the tail.
	off := max(fi.Size()-int64(2*limit), 0)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	b := bytes.TrimSpace(buf[:n])
	if len(b) > limit {
		b = b[len(b)-limit:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)/2 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(bytes.TrimSpace(b)), "")
}
