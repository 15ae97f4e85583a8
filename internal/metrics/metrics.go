// Package metrics exposes sharq's state and activity to Prometheus.
//
// Share capacity and job counts are read from the engine at scrape time (a
// custom Collector), so they are never stale and cost nothing between
// scrapes. Dispatches, preemptions, waits and cycle durations are counted
// as the engine commits them (a jobevents.Observer), and API requests by a
// wrapper around the AWS Batch handler.
//
// Metric names:
//
//	sharq_share_capacity_limit{queue,share,unit}      gauge
//	sharq_share_capacity_used{queue,share,unit}       gauge
//	sharq_share_capacity_borrowed{queue,share,unit}   gauge
//	sharq_share_capacity_lent{queue,share,unit}       gauge
//	sharq_share_capacity_idle{queue,share,unit}       gauge
//	sharq_share_runnable_jobs{queue,share}            gauge
//	sharq_jobs{status}                                gauge
//	sharq_job_transitions_total{status}               counter
//	sharq_dispatches_total{queue,share,via,borrowed}  counter
//	sharq_preemptions_total{queue,share,kind}         counter
//	sharq_dispatch_wait_seconds{queue,share}          histogram
//	sharq_cycle_duration_seconds                      histogram
//	sharq_api_requests_total{operation,result}        counter
//	sharq_store_commit_seconds                        histogram
//	sharq_usage_instance_seconds_total{queue,share,kind} counter (own, borrowed, lent, preempted)
//	sharq_usage_gpu_seconds_total{queue,share,kind}    counter
//	sharq_leader, sharq_lease_term                    gauges (a shared store's leader)
//	sharq_lease_renewals_total                        counter (a shared store's leader)
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/jobevents"
)

// Source is what the scrape-time collector reads; *engine.Engine
// implements it.
type Source interface {
	Shares() []engine.ShareState
	StatusCounts() map[string]int
	ReadWaits() engine.ReadWaits
}

// Metrics holds sharq's registry. It is a jobevents.Observer: pass it in
// engine.Options.Observers, then call Watch with the engine.
type Metrics struct {
	reg *prometheus.Registry

	transitions *prometheus.CounterVec
	dispatches  *prometheus.CounterVec
	preemptions *prometheus.CounterVec
	wait        *prometheus.HistogramVec
	cycle       prometheus.Histogram
	requests    *prometheus.CounterVec
}

// New makes the registry with the Go runtime and process collectors and
// sharq's own counters.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sharq_job_transitions_total", Help: "Service job status changes, by the status entered.",
		}, []string{"status"}),
		dispatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sharq_dispatches_total",
			Help: "Attempts dispatched, by how the capacity was found (idle, reclaim: cross-share preemption, in-share) and whether it was borrowed.",
		}, []string{"queue", "share", "via", "borrowed"}),
		preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sharq_preemptions_total", Help: "Attempts preempted, by the preempted job's share and the kind (cross-share or in-share).",
		}, []string{"queue", "share", "kind"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sharq_dispatch_wait_seconds", Help: "Time from a job's submission to each of its dispatches.",
			// Training jobs wait from milliseconds (idle capacity) to days.
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 12),
		}, []string{"queue", "share"}),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sharq_cycle_duration_seconds", Help: "Duration of a scheduling cycle: apply, decide, commit, act.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 3, 12),
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sharq_api_requests_total",
			Help: "AWS Batch API requests, by operation (the /v1/<op> path segment, or tags) and result (2xx, ClientException, ServerException, or the status class).",
		}, []string{"operation", "result"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.transitions, m.dispatches, m.preemptions, m.wait, m.cycle, m.requests,
	)
	return m
}

// Watch adds the gauges read from src at each scrape, and the usage
// counters when src is also a UsageSource.
func (m *Metrics) Watch(src Source) {
	m.reg.MustRegister(&stateCollector{src: src})
	if us, ok := src.(UsageSource); ok {
		m.reg.MustRegister(&usageCollector{src: us})
	}
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveCycle counts what a committed cycle did.
func (m *Metrics) ObserveCycle(took time.Duration, events []jobevents.Event, dispatches []jobevents.Dispatch, preempts []jobevents.Preempt) {
	m.cycle.Observe(took.Seconds())
	for _, ev := range events {
		m.transitions.WithLabelValues(ev.Job.Status).Inc()
	}
	for _, d := range dispatches {
		m.dispatches.WithLabelValues(d.Queue, d.Share, d.Via, strconv.FormatBool(d.Borrowed)).Inc()
		m.wait.WithLabelValues(d.Queue, d.Share).Observe(d.Waited.Seconds())
	}
	for _, p := range preempts {
		m.preemptions.WithLabelValues(p.Queue, p.Share, p.Kind).Inc()
	}
}
