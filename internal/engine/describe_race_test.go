package engine_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/store"
)

// readHook is a store that runs hook, once, when a job is first read from
// it: what a cycle commits while a reader waits for the store.
type readHook struct {
	store.Store
	hook func()
}

func (s *readHook) Job(ctx context.Context, id string) (store.Job, error) {
	if h := s.hook; h != nil {
		s.hook = nil
		h()
	}
	return s.Store.Job(ctx, id)
}

// Ensure a describe that missed a job in memory, and finds it in the store
// because a cycle committed it meanwhile, answers as a describe under the
// lock does: a waiting job's statusReason is why it waits now, not the one
// stored.
func TestDescribeOfJobCommittedWhileReadingTheStore(t *testing.T) {
	ctx := context.Background()
	st, clock := syncStore(t)
	hs := &readHook{Store: st}
	n := 0
	e, err := engine.New(ctx, engine.Options{Store: hs, Driver: &engine.Driver{Clock: clock},
		NewID: func() string { n++; return "j" + strconv.Itoa(n) }})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e: e}
	h.setupWalkthrough()
	submit := func() {
		t.Helper()
		if _, err := e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: "j", JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: payload("ml.g5.xlarge", 1, nil), QuotaShareName: "QS1"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		submit() // the environment's capacity, held
	}
	// While the describe reads the store, the job is submitted: it waits.
	hs.hook = submit
	got, err := e.DescribeServiceJob(ctx, "j4")
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.DescribeServiceJob(ctx, "j4")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusRunnable || got.Status != want.Status || got.StatusReason != want.StatusReason {
		t.Errorf("described while committed: %s %q\nwant %s %q", got.Status, got.StatusReason, want.Status, want.StatusReason)
	}
}
