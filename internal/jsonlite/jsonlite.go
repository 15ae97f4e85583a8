// Package jsonlite reads the plain JSON of sharq's busiest requests
// without reflection, and writes strings as encoding/json does. Its reader
// takes a strict subset of JSON, and every method reports false on
// anything outside it (an error included): the caller then reads the
// whole input again with encoding/json, whose results and errors stay the
// reference.
package jsonlite

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting SkipValue follows.
const maxDepth = 64

// Reader reads JSON from B, at I.
type Reader struct {
	B []byte
	I int
}

// Valid reports whether b is one JSON value in the subset SkipValue
// reads; false says nothing about JSON outside it.
func Valid(b []byte) bool {
	r := Reader{B: b}
	r.Space()
	return r.SkipValue() && r.End()
}

// Space skips JSON white space.
func (r *Reader) Space() {
	for r.I < len(r.B) {
		switch r.B[r.I] {
		case ' ', '\t', '\n', '\r':
			r.I++
		default:
			return
		}
	}
}

// Skip reads c, if it is next.
func (r *Reader) Skip(c byte) bool {
	if r.I < len(r.B) && r.B[r.I] == c {
		r.I++
		return true
	}
	return false
}

// End reports whether only white space follows.
func (r *Reader) End() bool {
	r.Space()
	return r.I == len(r.B)
}

// Next reads white space, then a ',' (true) or the closing c (false and
// done); anything else fails.
func (r *Reader) Next(c byte) (more, ok bool) {
	r.Space()
	switch {
	case r.Skip(','):
		r.Space()
		return true, true
	case r.Skip(c):
		return false, true
	}
	return false, false
}

// Each reads a list that opens with open and closes with close (an array
// or an object): item reads each element, starting at its first byte.
func (r *Reader) Each(open, close byte, item func() bool) bool {
	if !r.Skip(open) {
		return false
	}
	r.Space()
	if r.Skip(close) {
		return true
	}
	for {
		if !item() {
			return false
		}
		more, ok := r.Next(close)
		if !ok || !more {
			return ok
		}
	}
}

// Member reads a member's name and its ':', and returns the index of the
// name in fields, -1 if it is none of them. The name must be ASCII without
// escapes, and must not match a field only as encoding/json folds case
// (which would decode into it): callers then decode exactly the members
// encoding/json would.
func (r *Reader) Member(fields []string) (int, bool) {
	if !r.Skip('"') {
		return 0, false
	}
	start := r.I
	for r.I < len(r.B) && r.B[r.I] != '"' {
		if c := r.B[r.I]; c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return 0, false
		}
		r.I++
	}
	if r.I == len(r.B) {
		return 0, false
	}
	name := r.B[start:r.I]
	r.I++
	r.Space()
	if !r.Skip(':') {
		return 0, false
	}
	r.Space()
	for i, f := range fields {
		if string(name) == f {
			return i, true
		}
	}
	for _, f := range fields {
		if bytes.EqualFold(name, []byte(f)) {
			return 0, false
		}
	}
	return -1, true
}

// StrTo reads a string into dst.
func (r *Reader) StrTo(dst *string) bool {
	s, ok := r.Str()
	*dst = s
	return ok
}

// Str reads a string of valid UTF-8 whose escapes are all of one
// character (\" \\ \/ \b \f \n \r \t).
func (r *Reader) Str() (string, bool) {
	if !r.Skip('"') {
		return "", false
	}
	start := r.I
	for r.I < len(r.B) {
		switch c := r.B[r.I]; {
		case c == '"':
			raw := r.B[start:r.I]
			r.I++
			return string(raw), utf8.Valid(raw)
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			return "", false
		default:
			r.I++
		}
	}
	return "", false
}

// escaped finishes a string that began at start and has an escape at r.I.
func (r *Reader) escaped(start int) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(r.B) - start)
	from := start
	for r.I < len(r.B) {
		c := r.B[r.I]
		switch {
		case c == '"':
			sb.Write(r.B[from:r.I])
			r.I++
			s := sb.String()
			return s, utf8.ValidString(s)
		case c < 0x20:
			return "", false
		case c != '\\':
			r.I++
			continue
		}
		sb.Write(r.B[from:r.I])
		if r.I+1 >= len(r.B) {
			return "", false
		}
		switch e := r.B[r.I+1]; e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		default: // \u, or not JSON
			return "", false
		}
		r.I += 2
		from = r.I
	}
	return "", false
}

// Int reads a non-negative integer of at most 9 digits, which fits any
// Go integer type.
func (r *Reader) Int() (int, bool) {
	n, digits := 0, 0
	for r.I < len(r.B) && r.B[r.I] >= '0' && r.B[r.I] <= '9' {
		if digits > 0 && n == 0 { // a leading zero
			return 0, false
		}
		n = n*10 + int(r.B[r.I]-'0')
		digits++
		r.I++
	}
	return n, digits > 0 && digits <= 9
}

// SkipValue reads past one value of any kind, checking it as JSON: a
// string as Str takes it, a number as Int, true, false, null, or an array
// or object of those.
func (r *Reader) SkipValue() bool { return r.skipValue(0) }

func (r *Reader) skipValue(depth int) bool {
	if r.I >= len(r.B) || depth > maxDepth {
		return false
	}
	switch c := r.B[r.I]; {
	case c == '"':
		_, ok := r.Str()
		return ok
	case c >= '0' && c <= '9':
		_, ok := r.Int()
		return ok
	case c == 't':
		return r.word("true")
	case c == 'f':
		return r.word("false")
	case c == 'n':
		return r.word("null")
	case c == '[':
		return r.Each('[', ']', func() bool { return r.skipValue(depth + 1) })
	case c == '{':
		return r.Each('{', '}', func() bool {
			if _, ok := r.Str(); !ok {
				return false
			}
			r.Space()
			if !r.Skip(':') {
				return false
			}
			r.Space()
			return r.skipValue(depth + 1)
		})
	}
	return false
}

func (r *Reader) word(w string) bool {
	if len(r.B)-r.I >= len(w) && string(r.B[r.I:r.I+len(w)]) == w {
		r.I += len(w)
		return true
	}
	return false
}

// AppendString appends s as encoding/json writes a string with HTML
// escaping on: quotes, backslashes and control characters escaped, <, >
// and & as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, and
// each invalid UTF-8 byte as \ufffd.
func AppendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainASCII holds the ASCII bytes AppendString writes as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
