package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// startRecorder is the simulated executor, remembering every Start call
// by job name; the first start of a job named "flaky" fails transiently.
type startRecorder struct {
	executor.Executor
	mu     sync.Mutex
	starts map[string][]executor.Attempt
}

func (r *startRecorder) Start(ctx context.Context, a executor.Attempt) error {
	r.mu.Lock()
	r.starts[a.JobName] = append(r.starts[a.JobName], a)
	first := len(r.starts[a.JobName]) == 1
	r.mu.Unlock()
	if first && a.JobName == "flaky" {
		return errors.New("connection refused")
	}
	return r.Executor.Start(ctx, a)
}

func (r *startRecorder) attempts(name string) []executor.Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]executor.Attempt(nil), r.starts[name]...)
}

// Ensure the executor is handed the attempt's payload parsed, with the
// grace period the payload sets (else the server's), and that a start
// tried again is handed the same parse: the payload is read once per
// start, not once per try.
func TestStartCarriesParsedRequest(t *testing.T) {
	var rec *startRecorder
	h := startEngineWith(t, t.TempDir(), func(ex executor.Executor) executor.Executor {
		rec = &startRecorder{Executor: ex, starts: map[string][]executor.Attempt{}}
		return rec
	}, engine.Options{StopGrace: 40 * time.Second, RetryBackoff: time.Millisecond})
	h.setupWalkthrough()
	ctx := context.Background()
	for _, tc := range []struct {
		name, key, value string
		tries            int
		grace            time.Duration
	}{
		{"plain", "A", "1", 1, 40 * time.Second},
		{"graceful", trainingjob.StopGraceEnv, "7", 1, 7 * time.Second},
		{"flaky", "B", "2", 2, 40 * time.Second},
	} {
		p := payload("ml.g5.xlarge", 1, map[string]string{tc.key: tc.value})
		j, err := h.e.SubmitServiceJob(ctx, engine.SubmitServiceJobInput{JobName: tc.name, JobQueue: "my-sm-training-qm-jq",
			ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: p, QuotaShareName: "QS1"})
		if err != nil {
			t.Fatal(err)
		}
		h.waitStatus(j.JobID, "RUNNING")
		// Its capacity is the next job's.
		if err := h.e.TerminateServiceJob(ctx, j.JobID, "done"); err != nil {
			t.Fatal(err)
		}
		h.waitStatus(j.JobID, "FAILED")
		tries := rec.attempts(tc.name)
		if len(tries) != tc.tries {
			t.Fatalf("%s: %d Start calls, want %d", tc.name, len(tries), tc.tries)
		}
		for i, a := range tries {
			if a.Request == nil {
				t.Fatalf("%s: Start %d was handed no parsed request", tc.name, i+1)
			}
			if a.Request != tries[0].Request {
				t.Errorf("%s: Start %d was handed another parse than the first", tc.name, i+1)
			}
			if got := a.Request.Environment; len(got) != 1 || got[tc.key] != tc.value {
				t.Errorf("%s: request's Environment %v, want %s=%s", tc.name, got, tc.key, tc.value)
			}
			if string(a.Payload) != p {
				t.Errorf("%s: payload %s, want %s", tc.name, a.Payload, p)
			}
			if a.Grace != tc.grace {
				t.Errorf("%s: grace %s, want %s", tc.name, a.Grace, tc.grace)
			}
		}
	}
}
