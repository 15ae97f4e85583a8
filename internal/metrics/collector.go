package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// stateCollector reads share capacity and job counts from the engine at
// scrape time: they are the engine's own in-memory views, so a scrape costs
// one read lock and nothing has to be kept in step between scrapes.
type stateCollector struct {
	src Source
}

var (
	shareLabels  = []string{"queue", "share", "unit"}
	descLimit    = prometheus.NewDesc("sharq_share_capacity_limit", "A quota share's capacity limit, in instances.", shareLabels, nil)
	descUsed     = prometheus.NewDesc("sharq_share_capacity_used", "Instances held by a share's dispatched jobs, its own and borrowed.", shareLabels, nil)
	descBorrowed = prometheus.NewDesc("sharq_share_capacity_borrowed", "Instances a share uses beyond its limit, borrowed from lenders or unassigned capacity.", shareLabels, nil)
	descLent     = prometheus.NewDesc("sharq_share_capacity_lent", "A share's idle instances in use by borrowers.", shareLabels, nil)
	descIdle     = prometheus.NewDesc("sharq_share_capacity_idle", "A share's instances nobody uses.", shareLabels, nil)
	descRunnable = prometheus.NewDesc("sharq_share_runnable_jobs", "RUNNABLE jobs of a share, those that cannot run as configured included.", []string{"queue", "share"}, nil)
	descJobs     = prometheus.NewDesc("sharq_jobs", "Service jobs the server holds, by status.", []string{"status"}, nil)
	descReads    = prometheus.NewDesc("sharq_engine_reads_total", "Reads of the engine's in-memory state by the API, the console and these metrics.", nil, nil)
	descWaited   = prometheus.NewDesc("sharq_engine_read_waits_total", "Reads that found the engine's lock taken or wanted by a scheduling cycle.", nil, nil)
	descWait     = prometheus.NewDesc("sharq_engine_read_wait_seconds_total", "Time reads waited for the engine's lock, in all.", nil, nil)
	descUnlocked = prometheus.NewDesc("sharq_engine_unlocked_reads_total", "Job descriptions served without the engine's lock, from jobs kept as last read.", nil, nil)
	stateDescs   = []*prometheus.Desc{descLimit, descUsed, descBorrowed, descLent, descIdle, descRunnable, descJobs, descReads, descWaited, descWait, descUnlocked}
	gauge        = prometheus.GaugeValue
	counter      = prometheus.CounterValue
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range stateDescs {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.src.Shares() {
		ch <- prometheus.MustNewConstMetric(descRunnable, gauge, float64(s.Runnable), s.Queue, s.Share)
		for _, u := range s.Units {
			labels := []string{s.Queue, s.Share, u.Unit}
			ch <- prometheus.MustNewConstMetric(descLimit, gauge, float64(u.Limit), labels...)
			ch <- prometheus.MustNewConstMetric(descUsed, gauge, float64(u.Used), labels...)
			ch <- prometheus.MustNewConstMetric(descBorrowed, gauge, float64(u.Borrowed), labels...)
			ch <- prometheus.MustNewConstMetric(descLent, gauge, float64(u.Lent), labels...)
			ch <- prometheus.MustNewConstMetric(descIdle, gauge, float64(u.Idle), labels...)
		}
	}
	for status, n := range c.src.StatusCounts() {
		ch <- prometheus.MustNewConstMetric(descJobs, gauge, float64(n), status)
	}
	w := c.src.ReadWaits()
	ch <- prometheus.MustNewConstMetric(descReads, counter, float64(w.Reads))
	ch <- prometheus.MustNewConstMetric(descWaited, counter, float64(w.Waited))
	ch <- prometheus.MustNewConstMetric(descWait, counter, w.Wait.Seconds())
	ch <- prometheus.MustNewConstMetric(descUnlocked, counter, float64(w.Unlocked))
}
