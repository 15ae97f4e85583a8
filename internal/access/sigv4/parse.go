package sigv4

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	algorithm  = "AWS4-HMAC-SHA256"
	terminator = "aws4_request"
	// amzDateFormat is the ISO 8601 basic format of X-Amz-Date.
	amzDateFormat = "20060102T150405Z"
	// maxExpires is the longest a presigned URL may last (7 days, as AWS).
	maxExpires = 7 * 24 * time.Hour
)

// errUnsigned marks a request that carries no signature at all.
var errUnsigned = errors.New("unsigned request")

// signature is what a request says about its own signature.
type signature struct {
	presigned bool
	keyID     string
	// The credential scope: date (YYYYMMDD), region, service, terminator.
	scopeDate, region, service, term string
	signedHeaders                    []string // lowercase, as listed
	signedHeadersRaw                 string
	sig                              string // hex, as sent
	date                             time.Time
	dateRaw                          string
	expires                          time.Duration // presigned only
}

// parseRequest reads the signature of r from its Authorization header or,
// failing that, from its query (a presigned URL). It returns errUnsigned
// when r carries neither.
func parseRequest(r *http.Request) (*signature, error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		return parseHeader(auth, r.Header.Get("X-Amz-Date"))
	}
	q := r.URL.Query()
	if q.Has("X-Amz-Signature") || q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") {
		return parseQuery(q)
	}
	return nil, errUnsigned
}

// parseHeader parses the Authorization header form:
//
//	AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/batch/aws4_request, SignedHeaders=host;x-amz-date, Signature=hex
func parseHeader(auth, amzDate string) (*signature, error) {
	alg, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	if alg != algorithm {
		return nil, incompletef("Unsupported Authorization scheme %q: sign requests with %s.", truncate(alg), algorithm)
	}
	params := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, incompletef("Authorization header requires each component to be of the form key=value; got %q.", truncate(part))
		}
		params[k] = v
	}
	var missing []string
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if params[k] == "" {
			missing = append(missing, "Authorization header requires '"+k+"' parameter.")
		}
	}
	if amzDate == "" {
		missing = append(missing, "Authorization header requires existence of a 'X-Amz-Date' header.")
	}
	if len(missing) > 0 {
		return nil, incompletef("%s", strings.Join(missing, " "))
	}
	s := &signature{sig: params["Signature"], signedHeadersRaw: params["SignedHeaders"]}
	if err := s.fill(params["Credential"], amzDate); err != nil {
		return nil, err
	}
	return s, nil
}

// parseQuery parses the presigned form, X-Amz-* query parameters.
func parseQuery(q url.Values) (*signature, error) {
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Expires"} {
		if q.Get(k) == "" {
			return nil, incompletef("AWS query-string parameters must include 'X-Amz-Algorithm', 'X-Amz-Credential', " +
				"'X-Amz-Signature', 'X-Amz-Date', 'X-Amz-SignedHeaders', 'X-Amz-Expires'. Re-examine the query-string parameters.")
		}
	}
	if alg := q.Get("X-Amz-Algorithm"); alg != algorithm {
		return nil, incompletef("X-Amz-Algorithm only supports %q, not %q.", algorithm, truncate(alg))
	}
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > maxExpires {
		return nil, incompletef("X-Amz-Expires must be a whole number of seconds from 1 to %d.", int(maxExpires.Seconds()))
	}
	s := &signature{presigned: true, sig: q.Get("X-Amz-Signature"), signedHeadersRaw: q.Get("X-Amz-SignedHeaders"),
		expires: time.Duration(secs) * time.Second}
	if err := s.fill(q.Get("X-Amz-Credential"), q.Get("X-Amz-Date")); err != nil {
		return nil, err
	}
	return s, nil
}

// fill reads the credential, the date and the signed headers' list.
func (s *signature) fill(credential, amzDate string) error {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || parts[0] == "" {
		return incompletef("Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'.", truncate(credential))
	}
	s.keyID, s.scopeDate, s.region, s.service, s.term = parts[0], parts[1], parts[2], parts[3], parts[4]
	d, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return incompletef("Date must be in ISO-8601 'basic format' (yyyyMMdd'T'HHmmss'Z'); got '%s'.", truncate(amzDate))
	}
	s.date, s.dateRaw = d, amzDate
	if len(s.sig) != 64 || strings.Trim(s.sig, "0123456789abcdef") != "" {
		return invalidf("%s", msgMismatch)
	}
	for h := range strings.SplitSeq(s.signedHeadersRaw, ";") {
		if h == "" || h != strings.ToLower(h) {
			return incompletef("SignedHeaders must be lowercase header names separated by ';', got '%s'.", truncate(s.signedHeadersRaw))
		}
		s.signedHeaders = append(s.signedHeaders, h)
	}
	return nil
}

// truncate keeps what an error message quotes of the request short.
func truncate(s string) string {
	const n = 128
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
