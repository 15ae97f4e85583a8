package sim

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
)

// Workload is what a simulation replays: jobs with their submission times,
// and optionally the cluster they were generated for.
type Workload struct {
	Name string
	// Config is the cluster set-up the workload brings (built-in
	// generators do); nil for traces, which run on --config.
	Config *clusterconfig.Config
	Jobs   []Job
}

// Job is one job of a workload. Times are offsets from the start of the
// simulation.
type Job struct {
	ID           string        // unique; becomes the job ID
	Name         string        // jobName; default ID
	Class        string        // optional label to group wait times by (e.g. small/medium/large)
	At           time.Duration // submission
	Queue        string        // default: the config's only quota-share queue
	Share        string
	Priority     int
	InstanceType string
	Count        int
	// Groups are the instance groups of a job of several
	// (ResourceConfig.InstanceGroups), the first of them InstanceType ×
	// Count; nil for a job of one InstanceType.
	Groups []InstanceGroup
	// Runtime is how long the job runs once RUNNING, without preemption.
	Runtime time.Duration
	// PreemptionRetries is preemptionRetriesBeforeTermination; nil: unset.
	PreemptionRetries *int
	// Changes are later priority changes and a cancellation, by time.
	Changes []Change
}

// InstanceGroup is Count instances of Type, one group of a job's.
type InstanceGroup struct {
	Type  string
	Count int
}

// Change is a later action on a job: a new priority or a cancellation.
type Change struct {
	At       time.Duration
	Priority int
	Cancel   bool
}

// Sort orders jobs by submission time, then ID, and each job's changes by
// time, so the replay order does not depend on the file's.
func (w *Workload) Sort() {
	slices.SortStableFunc(w.Jobs, func(a, b Job) int { return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.ID, b.ID)) })
	for i := range w.Jobs {
		slices.SortStableFunc(w.Jobs[i].Changes, func(a, b Change) int { return cmp.Compare(a.At, b.At) })
	}
}

// Check verifies the jobs: unique IDs, a share, an instance type, a
// positive count and a runtime that is not negative.
func (w *Workload) Check() error { return w.check(make(map[string]bool, len(w.Jobs))) }

// check is Check, which checks that the IDs are unique only with a map of
// those seen.
func (w *Workload) check(seen map[string]bool) error {
	for i, j := range w.Jobs {
		switch {
		case j.ID == "":
			return fmt.Errorf("job %d: no ID", i+1)
		case seen != nil && seen[j.ID]:
			return fmt.Errorf("job %s: ID used twice", j.ID)
		case j.InstanceType == "":
			return fmt.Errorf("job %s: no instance type", j.ID)
		case j.Count < 1:
			return fmt.Errorf("job %s: instance count %d is below 1", j.ID, j.Count)
		case j.Runtime < 0 || j.At < 0:
			return fmt.Errorf("job %s: negative time", j.ID)
		case len(j.Groups) > 0 && (j.Groups[0].Type != j.InstanceType || j.Groups[0].Count != j.Count):
			return fmt.Errorf("job %s: its instance type and count are not its first instance group's", j.ID)
		}
		for _, g := range j.Groups {
			if g.Type == "" || g.Count < 1 {
				return fmt.Errorf("job %s: instance group %s:%d needs a type and a count of 1 or more", j.ID, g.Type, g.Count)
			}
		}
		if seen != nil {
			seen[j.ID] = true
		}
	}
	return nil
}
