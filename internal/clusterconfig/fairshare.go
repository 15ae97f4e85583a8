package clusterconfig

import (
	"fmt"
	"slices"

	"github.com/sharq-dev/sharq/internal/batchmodel"
)

// validateFairQueue checks that a fair-share queue has one service
// environment, which serves no other queue.
func (c *Config) validateFairQueue(f string, q *JobQueue) error {
	if !c.FairQueue(q) {
		return nil
	}
	if len(q.ServiceEnvironments) != 1 {
		return fieldErr(f+".serviceEnvironments", ErrRange, "a fair-share queue has exactly one service environment")
	}
	for _, o := range c.JobQueues {
		if o.Name != q.Name && slices.Contains(o.ServiceEnvironments, q.ServiceEnvironments[0]) {
			return fieldErr(f+".serviceEnvironments[0]", ErrDuplicate, "%q also serves queue %q; a fair-share queue's service environment serves no other", q.ServiceEnvironments[0], o.Name)
		}
	}
	return nil
}

// validateFairshare checks a fair-share policy against AWS's ranges, and
// that no two entries of shareDistribution can match one identifier.
func validateFairshare(f string, fp *FairsharePolicy) error {
	if fp.ShareDecaySeconds < 0 || fp.ShareDecaySeconds > 604800 {
		return fieldErr(f+".shareDecaySeconds", ErrRange, "%d is outside 0-604800", fp.ShareDecaySeconds)
	}
	if fp.ComputeReservation < 0 || fp.ComputeReservation > 99 {
		return fieldErr(f+".computeReservation", ErrRange, "%d is outside 0-99", fp.ComputeReservation)
	}
	for i, d := range fp.ShareDistribution {
		df := fmt.Sprintf("%s.shareDistribution[%d]", f, i)
		if d.ShareIdentifier == "" || len(d.ShareIdentifier) > 255 {
			return fieldErr(df+".shareIdentifier", ErrRange, "%q is not 1-255 characters long", d.ShareIdentifier)
		}
		if w := d.WeightFactor; w != nil && !(*w >= 0.0001 && *w <= 999.9999) {
			return fieldErr(df+".weightFactor", ErrRange, "%g is outside 0.0001-999.9999", *w)
		}
		for _, prev := range fp.ShareDistribution[:i] {
			if batchmodel.ShareIdentifiersOverlap(prev.ShareIdentifier, d.ShareIdentifier) {
				return fieldErr(df+".shareIdentifier", ErrDuplicate, "%q overlaps %q", d.ShareIdentifier, prev.ShareIdentifier)
			}
		}
	}
	return nil
}
