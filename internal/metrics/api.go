package metrics

import (
	"net/http"
	"strings"
)

// API counts the requests h serves, h being the AWS Batch handler mounted at
// /v1/. The operation is the path segment after /v1/ ("tags" for the tag
// operations, whose path carries an ARN); a path the handler does not know
// (404) counts as "unknown", so that stray paths cannot grow the label set.
func (m *Metrics) API(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		op := operation(r.URL.Path)
		if rec.status == http.StatusNotFound {
			op = "unknown"
		}
		m.requests.WithLabelValues(op, rec.result()).Inc()
	})
}

// operation names an API request by its path: /v1/submitservicejob →
// submitservicejob, /v1/tags/<arn> → tags.
func operation(path string) string {
	op := strings.TrimPrefix(path, "/v1/")
	if i := strings.IndexByte(op, '/'); i >= 0 {
		op = op[:i]
	}
	if op == "" {
		return "unknown"
	}
	return op
}

// statusRecorder remembers the status and the AWS error type of a response.
type statusRecorder struct {
	http.ResponseWriter
	status  int
	errType string
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		s.errType = errorType(s.Header())
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// errorType reads the AWS error code. The API sets the header under its
// exact, non-canonical name, as AWS sends it, so Get would miss it.
func errorType(h http.Header) string {
	if v := h["X-Amzn-ErrorType"]; len(v) > 0 {
		return v[0]
	}
	return h.Get("X-Amzn-ErrorType")
}

// result is the AWS error type of an error answer (ClientException or
// ServerException), else the status class (2xx).
func (s *statusRecorder) result() string {
	if s.errType != "" {
		return s.errType
	}
	code := s.status
	if code == 0 {
		code = http.StatusOK
	}
	return string(rune('0'+code/100)) + "xx"
}
