package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharq-dev/sharq/internal/store"
)

// TimeCommits returns st with each Commit's duration observed in
// sharq_store_commit_seconds: the durable write each cycle waits for. A
// store that keeps usage history still does.
func (m *Metrics) TimeCommits(st store.Store) store.Store {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "sharq_store_commit_seconds", Help: "Duration of a store commit, from the engine's call to the batch being durable.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
	})
	m.reg.MustRegister(h)
	if us, ok := st.(store.UsageStore); ok {
		return timedUsageStore{timedStore{Store: st, h: h}, us}
	}
	return timedStore{Store: st, h: h}
}

type timedUsageStore struct {
	timedStore
	store.UsageStore
}

type timedStore struct {
	store.Store
	h prometheus.Histogram
}

func (s timedStore) Commit(ctx context.Context, b *store.Batch) error {
	start := time.Now()
	err := s.Store.Commit(ctx, b)
	s.h.Observe(time.Since(start).Seconds())
	return err
}

// Lease is the leadership a server holds on a shared store.
type Lease interface {
	Term() int64
	Renewals() int64
}

// WatchLease exports the leader's lease: its term (which rises by one at
// every failover), its renewals, and that this server leads.
func (m *Metrics) WatchLease(l Lease) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharq_leader", Help: "1 on the server that leads (the others forward to it).",
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharq_lease_term", Help: "The leadership term: it rises by one at every failover or handover.",
		}, func() float64 { return float64(l.Term()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharq_lease_renewals_total", Help: "Successful renewals of the leader's lease.",
		}, func() float64 { return float64(l.Renewals()) }),
	)
}
