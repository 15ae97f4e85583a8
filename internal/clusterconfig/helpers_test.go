package clusterconfig_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/sim/memstore"
)

// remarshalled returns c after a trip through Marshal and Parse, so a test
// can compare what came back with what went in.
func remarshalled(t *testing.T, c *clusterconfig.Config) *clusterconfig.Config {
	t.Helper()
	b, err := clusterconfig.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := clusterconfig.Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("parse marshalled: %v\n%s", err, b)
	}
	return back
}

// applied returns a new in-memory engine with c applied to it.
func applied(t *testing.T, c *clusterconfig.Config) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{Store: memstore.New(), Driver: &engine.Driver{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterconfig.Apply(ctx, e, c); err != nil {
		t.Fatal(err)
	}
	return e
}
