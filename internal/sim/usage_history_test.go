package sim_test

import (
	"math"
	"testing"
)

// Ensure the report's usage, counted as the server's usage history counts
// it, agrees with the pools' own integrals: each share's own and borrowed
// instance-hours, the work preempted attempts lost (no checkpoints: all
// they held), and every borrowed hour from a share lent by it.
func TestUsageAgreesWithPools(t *testing.T) {
	for name, files := range map[string][2]string{
		"mixed_requeue": {"testdata/mixed.yaml", "testdata/requeue.csv"},
		"walkthrough":   {"../../examples/announcement.yaml", "../../examples/walkthrough.csv"},
		"solo_fail":     {"testdata/solo.yaml", "testdata/fail.csv"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runTrace(t, files[0], files[1])
			if len(r.Usage) == 0 {
				t.Fatal("no usage in the report")
			}
			type key struct{ queue, share, kind string }
			pools, usage := map[key]float64{}, map[key]float64{}
			for _, p := range r.Pools {
				for _, s := range p.Shares {
					pools[key{p.Queue, s.Share, "own"}] += s.OwnHours
					pools[key{p.Queue, s.Share, "borrowed"}] += s.BorrowedHours
				}
			}
			for _, p := range r.Preemptions.ByShare {
				pools[key{p.Queue, p.Share, "preempted"}] += p.LostInstanceHours
			}
			var borrowedFromShares, lent float64
			for _, u := range r.Usage {
				usage[key{u.Queue, u.Share, u.Kind}] += u.InstanceHours
				switch {
				case u.Kind == "borrowed" && u.Peer != "":
					borrowedFromShares += u.InstanceHours
				case u.Kind == "lent":
					lent += u.InstanceHours
				}
			}
			for k, want := range pools {
				if got := usage[k]; math.Abs(got-want) > 1e-3 {
					t.Errorf("%v: usage %.4f h, the pools %.4f h", k, got, want)
				}
			}
			if math.Abs(borrowedFromShares-lent) > 1e-3 {
				t.Errorf("borrowed from shares %.4f h, lent %.4f h", borrowedFromShares, lent)
			}
		})
	}
}
