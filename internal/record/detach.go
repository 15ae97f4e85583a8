package record

import (
	"maps"
	"slices"
)

// Detached copies a job's record without sharing what the engine changes
// in place later (an attempt's end, the preemption count, tags): events and
// kept describes are read after the engine's lock is released, by
// subscribers and encoders.
func Detached(j *Job) Job {
	d := *j
	// Shared, but clipped: an append to the copy's lists cannot write
	// where the engine appends to the record's.
	d.History, d.Demand, d.CapacityUsage, d.WaitFor = slices.Clip(d.History), slices.Clip(d.Demand), slices.Clip(d.CapacityUsage), slices.Clip(d.WaitFor)
	d.Attempts = slices.Clone(d.Attempts)
	if ps := d.PreemptionSummary; ps != nil {
		c := *ps
		c.RecentPreemptedAttempts = slices.Clone(c.RecentPreemptedAttempts)
		d.PreemptionSummary = &c
	}
	d.Tags = maps.Clone(d.Tags)
	return d
}
