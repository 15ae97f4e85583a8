package core_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sharq-dev/sharq/internal/core"
)

// TestActiveShareIdentifierLimit: a fair-share queue takes jobs of at most
// 500 active share identifiers; more jobs of an active one are taken, and
// an identifier whose jobs all ended makes room.
func TestActiveShareIdentifierLimit(t *testing.T) {
	c := core.New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Apply(core.PutEnv{Name: "se", Limits: []core.UnitCount{{Unit: "g5", Count: 1}}}))
	must(c.Apply(core.PutQueue{Name: "fq", Env: "se", Fair: &core.FairShare{}}))
	submit := func(job, share string) error {
		return c.Apply(core.Submit{Job: job, Queue: "fq", Share: share, Demand: []core.UnitCount{{Unit: "g5", Count: 1}}, PreemptionRetries: -1})
	}
	for i := range core.MaxActiveShareIdentifiers {
		must(submit(fmt.Sprintf("j%d", i), fmt.Sprintf("id%d", i)))
	}
	if err := submit("over", "new"); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("a job of a 501st identifier: %v", err)
	}
	must(submit("more", "id7"))
	must(c.Apply(core.Terminate{Job: "j3"}))
	must(submit("now", "new"))
}
