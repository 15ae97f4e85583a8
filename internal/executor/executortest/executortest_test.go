package executortest_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/executortest"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
)

// Ensure each of the executor's updates arrives, in order, as f made it.
func TestMapUpdates(t *testing.T) {
	ex := simulated.New()
	defer ex.Close()
	m := executortest.MapUpdates(ex, func(u executor.Update) executor.Update {
		u.Reason = "mapped " + string(u.State)
		return u
	})
	a := executor.Attempt{ID: "a1", JobID: "j1", Payload: []byte(`{"Environment":{"SHARQ_SIMULATED_RUNTIME_MS":"1"}}`)}
	if err := m.Start(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	for _, want := range []executor.State{executor.Starting, executor.Running, executor.Succeeded} {
		select {
		case u := <-m.Updates():
			if u.AttemptID != "a1" || u.State != want || u.Reason != "mapped "+string(want) {
				t.Fatalf("update %+v, want %s with the mapped reason", u, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s update", want)
		}
	}
}
