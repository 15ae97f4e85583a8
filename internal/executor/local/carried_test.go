package local

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Ensure an attempt runs from the request it carries, parsed once by the
// engine, and leaves that request as it was.
func TestRunsCarriedRequest(t *testing.T) {
	h := newHarness(t, Options{})
	j := sh(`echo "foo=$FOO lr=$SM_HP_LR"`).withEnv("FOO", "bar")
	j.HPs = map[string]any{"lr": "0.1"}
	r, err := trainingjob.Parse(j.payload())
	if err != nil {
		t.Fatal(err)
	}
	before, err := trainingjob.Parse(j.payload())
	if err != nil {
		t.Fatal(err)
	}
	a := attemptOf("carried", "j1", j)
	a.Request, a.Payload = r, nil // nothing left to parse
	h.start(a)
	h.await("carried", executor.Succeeded)
	if got := strings.TrimSpace(h.log("carried", "algo-1", "stdout")); got != "foo=bar lr=0.1" {
		t.Errorf("stdout %q, want the request's environment and hyperparameters", got)
	}
	if diff := cmp.Diff(before, r, cmpopts.IgnoreUnexported(trainingjob.Request{})); diff != "" {
		t.Errorf("running the attempt changed its request (-before +after):\n%s", diff)
	}
}
