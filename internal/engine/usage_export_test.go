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
	for _, q := range e.sortedQueues() {
		for _, h := range e.core.Holdings(q.JobQueueName) {
			if j := e.jobs[h.Job]; j != nil && j.AttemptID != "" {
				want[j.AttemptID] = usage.Parts(h)
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
