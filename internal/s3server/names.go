package s3server

import (
	"net"
	"path/filepath"
	"strings"
)

// validBucket tells whether name is a bucket name AWS accepts for a
// general purpose bucket: 3 to 63 lowercase letters, digits, dots and
// hyphens, starting and ending with a letter or digit, no "..", not an IP
// address, none of AWS's reserved prefixes and suffixes.
func validBucket(name string) bool {
	if len(name) < 3 || len(name) > 63 || !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	for _, bad := range []string{"..", ".-", "-."} {
		if strings.Contains(name, bad) {
			return false
		}
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	return net.ParseIP(name) == nil
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// maxKey is the longest key S3 takes, in bytes.
const maxKey = 1024

// maxSegment bounds one escaped key segment so that it and its suffix fit
// in a file name (255 bytes on the usual file systems).
const maxSegment = 240

// objectSuffix ends the file name of an object; a directory's name never
// holds '#' (escaped), so an object "a" and the objects under "a/" live
// side by side as "a#o" and "a/".
const objectSuffix = "#o"

// keyPath is the path of key's object relative to its bucket's directory:
// each "/"-separated segment escaped (escapeSegment), the last with
// objectSuffix. It fails for a key S3 refuses or that cannot be stored.
func keyPath(key string) (string, error) {
	if key == "" || len(key) > maxKey {
		return "", errKeyTooLong
	}
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
		if len(segs[i]) > maxSegment {
			return "", errKeyTooLong
		}
	}
	segs[len(segs)-1] += objectSuffix
	return filepath.Join(segs...), nil
}

// escapeSegment makes one segment of a key a safe file name: bytes other
// than letters, digits and "-_." as %XX, the empty segment as "%", and
// "." and ".." with their dots escaped. It never yields "", ".", "..",
// a '/' or a '#'.
func escapeSegment(s string) string {
	switch s {
	case "":
		return "%"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// unescapeSegment reverses escapeSegment; ok is false for a name it did
// not make (a stray file in the bucket's directory).
func unescapeSegment(name string) (string, bool) {
	if name == "%" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		hi, ok1 := unhex(name[i+1])
		lo, ok2 := unhex(name[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
