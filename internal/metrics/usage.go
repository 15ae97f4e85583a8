package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharq-dev/sharq/internal/usage"
)

// UsageSource is what the usage counters read; *engine.Engine implements
// it.
type UsageSource interface {
	UsageCounters() []usage.Counter
}

var (
	usageLabels       = []string{"queue", "share", "kind"}
	descUsageInstance = prometheus.NewDesc("sharq_usage_instance_seconds_total",
		"Instance-seconds held since the server started, by share and kind: own, borrowed, lent (a borrower held the share's idle capacity) and preempted (held by attempts later preempted, counted when preempted).", usageLabels, nil)
	descUsageGPU = prometheus.NewDesc("sharq_usage_gpu_seconds_total",
		"GPU-seconds held since the server started, by share and kind, as sharq_usage_instance_seconds_total.", usageLabels, nil)
)

// usageCollector reads the engine's usage totals at scrape time. An
// attempt whose end is reported after a scrape may end before it, so a
// total can read less than it did: the collector never reports less than
// it already has, as a counter must.
type usageCollector struct {
	src  UsageSource
	mu   sync.Mutex
	last map[usage.CounterKey]usage.Amount
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descUsageInstance
	ch <- descUsageGPU
}

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[usage.CounterKey]usage.Amount{}
	}
	for _, u := range c.src.UsageCounters() {
		last := c.last[u.CounterKey]
		a := usage.Amount{InstanceMillis: max(last.InstanceMillis, u.InstanceMillis), GPUMillis: max(last.GPUMillis, u.GPUMillis)}
		c.last[u.CounterKey] = a
	}
	for k, a := range c.last {
		ch <- prometheus.MustNewConstMetric(descUsageInstance, counter, float64(a.InstanceMillis)/1000, k.Queue, k.Share, k.Kind)
		ch <- prometheus.MustNewConstMetric(descUsageGPU, counter, float64(a.GPUMillis)/1000, k.Queue, k.Share, k.Kind)
	}
}
