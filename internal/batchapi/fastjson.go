package batchapi

import (
	"strings"
	"unicode/utf8"
)

// decodeFast reads the usual SubmitServiceJob body (a flat object of the
// string members and schedulingPriority, each once, keys as the SDKs
// write them, no \u escapes) without reflection, and reports whether it
// could. Anything else, an error included, is left to decodeJSON, so the
// answers stay encoding/json's; on true, in holds what json.Unmarshal
// would have decoded (FuzzDecodeFast checks it).
func (in *SubmitServiceJobRequest) decodeFast(body []byte) bool {
	r := fastReader{b: body}
	r.space()
	if !r.skip('{') {
		return false
	}
	r.space()
	if r.skip('}') {
		return r.end()
	}
	var seen uint16
	for {
		key, ok := r.str()
		if !ok {
			return false
		}
		r.space()
		if !r.skip(':') {
			return false
		}
		r.space()
		var bit uint16
		switch key {
		case "jobName":
			bit, ok = 1<<0, r.strTo(&in.JobName)
		case "jobQueue":
			bit, ok = 1<<1, r.strTo(&in.JobQueue)
		case "serviceJobType":
			bit, ok = 1<<2, r.strTo(&in.ServiceJobType)
		case "serviceRequestPayload":
			bit, ok = 1<<3, r.strTo(&in.ServiceRequestPayload)
		case "quotaShareName":
			bit, ok = 1<<4, r.strTo(&in.QuotaShareName)
		case "shareIdentifier":
			bit, ok = 1<<5, r.strTo(&in.ShareIdentifier)
		case "clientToken":
			var s string
			bit, ok = 1<<6, r.strTo(&s)
			in.ClientToken = &s
		case "schedulingPriority":
			var n int
			bit, ok = 1<<7, r.int(&n)
			in.SchedulingPriority = &n
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		r.space()
		if r.skip('}') {
			return r.end()
		}
		if !r.skip(',') {
			return false
		}
		r.space()
	}
}

// fastReader reads the subset of JSON decodeFast takes; every method
// reports false on anything outside it.
type fastReader struct {
	b []byte
	i int
}

func (r *fastReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *fastReader) skip(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only white space follows.
func (r *fastReader) end() bool {
	r.space()
	return r.i == len(r.b)
}

func (r *fastReader) strTo(dst *string) bool {
	s, ok := r.str()
	*dst = s
	return ok
}

// str reads a string of valid UTF-8 whose escapes are all of one
// character (\" \\ \/ \b \f \n \r \t).
func (r *fastReader) str() (string, bool) {
	if !r.skip('"') {
		return "", false
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			raw := r.b[start:r.i]
			r.i++
			return string(raw), utf8.Valid(raw)
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			return "", false
		default:
			r.i++
		}
	}
	return "", false
}

// escaped finishes a string that began at start and has an escape at r.i.
func (r *fastReader) escaped(start int) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(r.b) - start)
	from := start
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			sb.Write(r.b[from:r.i])
			r.i++
			s := sb.String()
			return s, utf8.ValidString(s)
		case c < 0x20:
			return "", false
		case c != '\\':
			r.i++
			continue
		}
		sb.Write(r.b[from:r.i])
		if r.i+1 >= len(r.b) {
			return "", false
		}
		switch e := r.b[r.i+1]; e {
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
		r.i += 2
		from = r.i
	}
	return "", false
}

// int reads a non-negative integer of at most 9 digits, which fits any int.
func (r *fastReader) int(dst *int) bool {
	n, digits := 0, 0
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		if digits > 0 && n == 0 { // a leading zero
			return false
		}
		n = n*10 + int(r.b[r.i]-'0')
		digits++
		r.i++
	}
	*dst = n
	return digits > 0 && digits <= 9
}
