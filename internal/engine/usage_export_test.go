package engine

import (
	"fmt"
	"slices"

	"github.com/sharq-dev/sharq/internal/usage"
)

// CheckUsageTracking compares what the usage tracker follows, as the
// cycles' incremental accounting left it, with every dispatched attempt's
// holding asked of the core now.
func CheckUsageTracking(e *Engine) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	tr := e.usage.tracker
	want := map[string][]usage.Part{}
	use := map[usage.ShareKey]map[string]int{}
	for _, q := range e.model.Queues() {
		for _, h := range e.core.Holdings(q.JobQueueName) {
			if j := e.jobs[h.Job]; j != nil && j.AttemptID != "" {
				want[j.AttemptID] = usage.Parts(h)
				k := usage.ShareKey{Queue: j.Queue, Share: j.QuotaShareName}
				if use[k] == nil {
					use[k] = map[string]int{}
				}
				for _, d := range j.Demand {
					use[k][d.Unit] += d.Count
				}
			}
		}
	}
	// What each share holds, as the accounting counts it to tell which
	// shares stand beyond their limits and which have idle capacity; after
	// a restart, once the first cycle has counted it.
	for k, units := range e.usage.use {
		if e.usage.dirty {
			break
		}
		for unit, n := range units {
			if n != use[k][unit] {
				return fmt.Errorf("share %v holds %d %s, the accounting counts %d", k, use[k][unit], unit, n)
			}
		}
	}
	for k, units := range use {
		if e.usage.dirty {
			break
		}
		for unit, n := range units {
			if e.usage.use[k][unit] != n {
				return fmt.Errorf("share %v holds %d %s, the accounting counts %d", k, n, unit, e.usage.use[k][unit])
			}
		}
	}
	live := tr.Live()
	if len(live) != len(want) {
		return fmt.Errorf("the tracker follows %d attempts, %d are dispatched", len(live), len(want))
	}
	for _, id := range live {
		if got := tr.Parts(id); !slices.Equal(got, want[id]) {
			return fmt.Errorf("attempt %s: the tracker has %+v, the core %+v", id, got, want[id])
		}
	}
	return nil
}
