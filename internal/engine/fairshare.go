package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store"
)

// loadFairUsage sets, for every fair-share queue, each share identifier's
// decayed usage from the store's attempts: a stopped attempt counts from
// startedAt to stoppedAt, the current attempt of a dispatched job from its
// dispatch to now.
func (e *Engine) loadFairUsage(ctx context.Context, now time.Time) error {
	for _, q := range e.model.Queues() {
		f := e.model.Fair(q)
		if f == nil {
			continue
		}
		window := float64(f.DecaySeconds)
		if window == 0 {
			window = core.DefaultDecaySeconds
		}
		usage := map[string]float64{}
		add := func(j *record.Job) {
			if j.ShareIdentifier == "" {
				return
			}
			n := 0
			for _, d := range j.Demand {
				n += d.Count
			}
			u := usage[j.ShareIdentifier]
			for _, iv := range heldIntervals(j, now) {
				u += fairContribution(n, now.Sub(iv[1]).Seconds(), iv[1].Sub(iv[0]).Seconds(), window)
			}
			usage[j.ShareIdentifier] = u
		}
		after := ""
		for {
			page, next, err := e.opts.Store.ListJobs(ctx, store.JobFilter{Queue: q.JobQueueArn, Limit: 1000, After: after})
			if err != nil {
				return fmt.Errorf("read the jobs of fair-share queue %s: %w", q.JobQueueName, err)
			}
			for _, sj := range page {
				j := e.jobs[sj.ID] // a live one as loaded
				if j == nil {
					var err error
					if j, err = decodeJob(sj); err != nil {
						return err
					}
				}
				add(j)
			}
			if next == "" {
				break
			}
			after = next
		}
		for _, id := range slices.Sorted(maps.Keys(usage)) {
			if err := e.core.Apply(core.SetUsage{Queue: q.JobQueueName, Share: id, Usage: usage[id], At: now.UnixNano()}); err != nil {
				return fmt.Errorf("usage of share identifier %s in job queue %s: %w", id, q.JobQueueName, err)
			}
		}
	}
	return nil
}

// heldIntervals are the spans during which a job held capacity, as far as
// the store tells: each attempt's start to stop, and a dispatched job's
// current attempt from its dispatch to now.
func heldIntervals(j *record.Job, now time.Time) [][2]time.Time {
	var out [][2]time.Time
	for i, a := range j.Attempts {
		current := i == len(j.Attempts)-1 && dispatchedStatus(j.Status)
		switch {
		case current && j.DispatchedAt > 0:
			out = append(out, [2]time.Time{time.Unix(0, j.DispatchedAt), now})
		case a.StartedAt > 0 && a.StoppedAt >= a.StartedAt:
			out = append(out, [2]time.Time{time.UnixMilli(a.StartedAt), time.UnixMilli(a.StoppedAt)})
		}
	}
	return out
}

// fairContribution is what n instances held for dur seconds, ending ago
// seconds before now, add to decayed usage: core.Decay over the span, then
// decayed for the time since.
func fairContribution(n int, ago, dur, window float64) float64 {
	if dur <= 0 || n <= 0 {
		return 0
	}
	return core.Decay(core.Decay(0, n, dur, window), 0, max(0, ago), window)
}
