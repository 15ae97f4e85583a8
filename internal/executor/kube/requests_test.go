package kube

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharq-dev/sharq/internal/executor"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns/pods":                         "pods",
		"/api/v1/namespaces/ns/pods/p":                       "pods",
		"/api/v1/namespaces/ns/pods/p/log":                   "pods/log",
		"/api/v1/namespaces/ns/services/s":                   "services",
		"/api/v1/namespaces":                                 "namespaces",
		"/api/v1/namespaces/ns":                              "namespaces",
		"/api/v1/pods":                                       "pods",
		"/apis/coordination.k8s.io/v1/namespaces/n/leases/l": "leases",
		"/version": "version",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// Ensure the executor counts its requests to the API server by verb,
// resource and code.
func TestRequestsAreCounted(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("counted", "ml.g5.xlarge", 2, nil))
	h.wait("counted", executor.Running, wait)
	reg := prometheus.NewRegistry()
	reg.MustRegister(h.ex)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	for key, least := range map[string]float64{
		"code=201 resource=pods verb=POST ":     2,
		"code=201 resource=services verb=POST ": 1,
		"code=200 resource=pods verb=WATCH ":    1,
		"code=200 resource=pods verb=GET ":      1, // the informer's list
	} {
		if got[key] < least {
			t.Errorf("sharq_kube_api_requests_total{%s} = %v, want at least %v; all: %v", key, got[key], least, got)
		}
	}
}
