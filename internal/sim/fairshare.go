package sim

import (
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/engine"
)

// fairStrategy marks the pool share of a share identifier of a fair-share
// queue: it has no limit, and all it uses is its own, as in a FIFO queue.
const fairStrategy = engine.StrategyFairShare

// addIdentifiers gives each pool of a fair-share queue a share per share
// identifier that the workload's jobs there name, in place of the queue's
// one nameless share, so that the report tells each identifier's use.
func (c *collector) addIdentifiers() {
	for _, p := range c.pools {
		if !c.s.fair[p.queue] {
			continue
		}
		p.shares = nil
		for i := range c.s.w.Jobs {
			j := &c.s.w.Jobs[i]
			if j.Queue == p.queue && p.share(j.Share) == nil {
				p.shares = append(p.shares, &poolShare{name: j.Share, strategy: fairStrategy})
				slices.SortFunc(p.shares, func(a, b *poolShare) int { return strings.Compare(a.name, b.name) })
			}
		}
	}
}
