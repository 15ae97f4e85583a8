package kube

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// requestCounter counts the executor's calls to the API server, by verb,
// resource and status code: sharq_kube_api_requests_total, which the
// executor serves as a prometheus.Collector.
type requestCounter struct {
	vec *prometheus.CounterVec
}

func newRequestCounter() *requestCounter {
	return &requestCounter{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sharq_kube_api_requests_total",
		Help: "Requests of the kube executor to the Kubernetes API server, by verb (the HTTP method, WATCH for a watch), resource and status code.",
	}, []string{"verb", "resource", "code"})}
}

// wrap counts each request that goes through rt.
func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		code := "error"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		verb := r.Method
		if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true" {
			verb = "WATCH"
		}
		c.vec.WithLabelValues(verb, resourceOf(r.URL.Path), code).Inc()
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf is the resource an API path names: /api/v1/namespaces/ns/pods/p/log
// is pods/log, /api/v1/namespaces/ns is namespaces, /version is version.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return parts[0]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "namespaces"
	case 1, 2:
		return parts[0]
	}
	return parts[0] + "/" + parts[2]
}

// Describe and Collect make the executor a prometheus.Collector of its
// request counts.
func (e *Executor) Describe(ch chan<- *prometheus.Desc) { e.requests.vec.Describe(ch) }

// Collect: see Describe.
func (e *Executor) Collect(ch chan<- prometheus.Metric) { e.requests.vec.Collect(ch) }
