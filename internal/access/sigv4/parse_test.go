package sigv4

import (
	"net/url"
	"testing"
)

// FuzzParse feeds the signature parsers arbitrary headers and queries:
// they must refuse or accept, never panic, and whatever they accept must
// hold a whole credential scope.
func FuzzParse(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=SKIA/20250101/us-east-1/batch/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"20250101T000000Z", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=SKIA%2F20250101%2Fus-east-1%2Fbatch%2Faws4_request&X-Amz-Date=20250101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00")
	f.Add("AWS4-HMAC-SHA256 ,,=,", "", "X-Amz-Expires=-1")
	f.Fuzz(func(t *testing.T, auth, date, query string) {
		check := func(s *signature, err error) {
			if err != nil {
				return
			}
			if s.keyID == "" || len(s.sig) != 64 || len(s.signedHeaders) == 0 {
				t.Fatalf("accepted an incomplete signature: %+v", s)
			}
		}
		check(parseHeader(auth, date))
		if q, err := url.ParseQuery(query); err == nil {
			check(parseQuery(q))
		}
	})
}
