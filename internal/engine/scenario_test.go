package engine_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/forecast"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// TestScenarios runs the engine's own rules, in testdata/scenarios, on a
// driven engine over a real store, a fake clock and an executor the
// scenario plays: DISABLED queues, clientToken idempotency, time limit
// actions, retry counting, reconciliation after a restart. Rewrite the
// expected output with -rewrite, and review every diff.
//
// Commands (one per block; arguments as key=value):
//
//	setup                      the announcement's queue and three shares
//	env instances=N            the service environment's capacity becomes N
//	submit name= share= [prio= token= attempts= retry=GLOB:ACTION,... count= preemptions=
//	       maxruntime=SECONDS timeout=SECONDS]
//	priority name= prio=       terminate name=
//	queue state=ENABLED|DISABLED [timelimit=SECONDS]
//	report name= state=RUNNING|SUCCEEDED|FAILED|LOST
//	                           the executor reports on the job's attempt,
//	                           with the block's input as the reason
//	advance by=DURATION        the clock moves on; housekeeping runs
//	restart [lost=NAME,...]    a new engine on the same store; the named
//	                           jobs' attempts are unknown to the executor
//	jobs                       every job: status, reason, attempts
//	eta                        estimate start times now; every RUNNABLE
//	                           job's estimate, from the clock's time
//	minruntime share= seconds= the share's minimum runtime before preemption
//	wake                       when the engine wants a cycle, from the clock
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			w := newWorld(t)
			datadriven.RunTest(t, path, w.handle)
		})
	}
}

const scenarioQueue = "my-sm-training-qm-jq"

// world is one scenario's engine, store, clock and executor.
type world struct {
	t     *testing.T
	st    *sqlite.Store
	clock *fakeClock
	ex    *playedExecutor
	e     *engine.Engine
	ids   map[string]string // job name → ID
	order []string          // job names in submission order
}

func newWorld(t *testing.T) *world {
	st, clock := syncStore(t)
	w := &world{t: t, st: st, clock: clock, ex: &playedExecutor{live: map[string]executor.Attempt{}}, ids: map[string]string{}}
	w.open()
	return w
}

func (w *world) open() {
	e, err := engine.New(context.Background(), engine.Options{Store: w.st, Executor: w.ex, Driver: &engine.Driver{Clock: w.clock}})
	if err != nil {
		w.t.Fatal(err)
	}
	w.e = e
}

// step moves the clock by a millisecond, so that each command is an
// instant of its own, and delivers what the executor reported meanwhile.
func (w *world) step() {
	w.clock.Add(time.Millisecond)
	for len(w.ex.pending) > 0 {
		us := w.ex.pending
		w.ex.pending = nil
		if _, err := w.e.ApplyInstant(context.Background(), engine.Instant{Updates: us}); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := engine.CheckAttemptHandles(w.e); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) handle(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	arg := func(key, def string) string {
		for _, a := range d.CmdArgs {
			if a.Key == key && len(a.Vals) > 0 {
				return strings.Join(a.Vals, ",")
			}
		}
		return def
	}
	num := func(key string, def int) int {
		n, err := strconv.Atoi(arg(key, strconv.Itoa(def)))
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		return n
	}
	var err error
	switch d.Cmd {
	case "setup":
		h := &harness{t: t, e: w.e}
		h.setupWalkthrough()
	case "env":
		_, err = w.e.UpdateServiceEnvironment(ctx, batchmodel.UpdateServiceEnvironmentInput{ServiceEnvironment: "my-sm-training-qm-se",
			CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: num("instances", 3)}}})
	case "submit":
		prio := num("prio", 0)
		in := engine.SubmitServiceJobInput{JobName: arg("name", ""), JobQueue: scenarioQueue, ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: payloadMaxRuntime("ml.g5.xlarge", num("count", 1), num("maxruntime", 0)), QuotaShareName: arg("share", ""),
			SchedulingPriority: &prio, ClientToken: arg("token", "")}
		if n := num("timeout", 0); n > 0 {
			in.TimeoutConfig = &record.TimeoutConfig{AttemptDurationSeconds: n}
		}
		if n := num("attempts", 0); n > 0 {
			in.RetryStrategy = &record.RetryStrategy{Attempts: n}
			for _, r := range strings.Split(arg("retry", ""), ",") {
				if glob, action, ok := strings.Cut(r, ":"); ok {
					in.RetryStrategy.EvaluateOnExit = append(in.RetryStrategy.EvaluateOnExit, record.EvaluateOnExit{OnStatusReason: glob, Action: action})
				}
			}
		}
		if n := num("preemptions", -1); n >= 0 {
			in.PreemptionConfiguration = &record.JobPreemptionConfiguration{PreemptionRetriesBeforeTermination: &n}
		}
		var j record.Job
		if j, err = w.e.SubmitServiceJob(ctx, in); err == nil {
			if old, ok := w.ids[in.JobName]; ok && old != j.JobID {
				d.Fatalf(t, "two jobs named %s", in.JobName)
			} else if !ok {
				w.ids[in.JobName] = j.JobID
				w.order = append(w.order, in.JobName)
			}
		}
	case "priority":
		_, err = w.e.UpdateServiceJob(ctx, w.id(d, arg("name", "")), num("prio", 0))
	case "terminate":
		err = w.e.TerminateServiceJob(ctx, w.id(d, arg("name", "")), "terminated by the scenario")
	case "queue":
		in := batchmodel.UpdateJobQueueInput{JobQueue: scenarioQueue, State: arg("state", "")}
		if s := num("timelimit", 0); s > 0 {
			in.JobStateTimeLimitActions = []record.JobStateTimeLimitAction{{Action: "TERMINATE", MaxTimeSeconds: s, State: "RUNNABLE",
				Reason: "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"}}
		}
		_, err = w.e.UpdateJobQueue(ctx, in)
	case "report":
		j, derr := w.e.DescribeServiceJob(ctx, w.id(d, arg("name", "")))
		if derr != nil {
			d.Fatalf(t, "%v", derr)
		}
		a, ok := w.ex.attemptOf(j.JobID)
		if !ok {
			d.Fatalf(t, "job %s has no live attempt", j.JobName)
		}
		state := executor.State(arg("state", ""))
		if state.Terminal() {
			delete(w.ex.live, a.ID)
		}
		reason := strings.TrimSpace(d.Input)
		err = w.e.Deliver(ctx, executor.Update{AttemptID: a.ID, JobID: j.JobID, State: state, Reason: reason})
	case "advance":
		by, perr := time.ParseDuration(arg("by", "1s"))
		if perr != nil {
			d.Fatalf(t, "by: %v", perr)
		}
		w.clock.Add(by)
		err = w.e.Tick(ctx)
	case "restart":
		for _, name := range strings.Split(arg("lost", ""), ",") {
			if id, ok := w.ids[name]; ok {
				if a, ok := w.ex.attemptOf(id); ok {
					delete(w.ex.live, a.ID) // the executor lost it: nothing of it is left
				}
			}
		}
		w.open()
	case "minruntime":
		arn := "arn:aws:batch:us-east-1:000000000000:job-queue/" + scenarioQueue + "/quota-share/" + arg("share", "")
		_, err = w.e.SetQuotaShareMinimumRuntime(ctx, arn, num("seconds", 0))
	case "wake":
		at, ok := w.e.NextWake()
		if !ok {
			return "none\n"
		}
		return fmt.Sprintf("in %v\n", at.Sub(w.clock.Now()))
	case "jobs":
		w.step()
		return w.jobs()
	case "eta":
		w.step()
		return w.estimates()
	default:
		d.Fatalf(t, "unknown command %s", d.Cmd)
	}
	w.step()
	if err != nil {
		return fmt.Sprintf("error: %s: %s\n", engine.ErrorCode(err), engine.ErrorMessage(err))
	}
	return "ok\n"
}

func (w *world) id(d *datadriven.TestData, name string) string {
	id, ok := w.ids[name]
	if !ok {
		return name // an unknown job: the engine says so
	}
	return id
}

// jobs lists every job in submission order, with what the executor runs.
func (w *world) jobs() string {
	var b strings.Builder
	for _, name := range w.order {
		j, err := w.e.DescribeServiceJob(context.Background(), w.ids[name])
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", name, engine.ErrorMessage(err))
			continue
		}
		_, running := w.ex.attemptOf(j.JobID)
		fmt.Fprintf(&b, "%s: %s attempts=%d", name, j.Status, len(j.Attempts))
		if j.PreemptionSummary != nil {
			fmt.Fprintf(&b, " preempted=%d", j.PreemptionSummary.PreemptedAttemptCount)
		}
		if running {
			b.WriteString(" executor=running")
		}
		if j.StatusReason != "" {
			fmt.Fprintf(&b, " reason=%q", w.named(j.StatusReason))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// named replaces the job IDs in a reason by the jobs' names, which do not
// change from run to run.
func (w *world) named(reason string) string {
	for name, id := range w.ids {
		reason = strings.ReplaceAll(reason, id, name)
	}
	return reason
}

// estimates estimates start times now and lists every RUNNABLE job's
// estimate in submission order, relative to the clock.
func (w *world) estimates() string {
	if _, err := w.e.ComputeStartEstimates(); err != nil {
		w.t.Fatal(err)
	}
	now := w.clock.Now()
	var b strings.Builder
	for _, name := range w.order {
		j, err := w.e.DescribeServiceJob(context.Background(), w.ids[name])
		if err != nil || j.Status != engine.StatusRunnable {
			continue
		}
		est, ok := w.e.LatestStartEstimate(j.JobID)
		fmt.Fprintf(&b, "%s: ", name)
		at := time.UnixMilli(est.At).Sub(now).Round(time.Second)
		switch {
		case !ok:
			b.WriteString("not estimated")
		case est.Kind == forecast.Start && est.Basis == 0:
			b.WriteString("now")
		case est.Kind == forecast.Start:
			fmt.Fprintf(&b, "in %v (%s)", at, est.Basis)
		case est.Kind == forecast.NotWithin:
			fmt.Fprintf(&b, "not within %v", at)
		default:
			b.WriteString(est.Kind.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// payloadMaxRuntime is a payload with StoppingCondition.MaxRuntimeInSeconds
// (none when 0).
func payloadMaxRuntime(instanceType string, count, maxRuntime int) string {
	p := payload(instanceType, count, nil)
	if maxRuntime == 0 {
		return p
	}
	return strings.TrimSuffix(p, "}") + fmt.Sprintf(`,"StoppingCondition":{"MaxRuntimeInSeconds":%d}}`, maxRuntime)
}

// playedExecutor is an executor whose attempts do only what the scenario
// reports: it remembers what runs, and reports a stop at once.
type playedExecutor struct {
	live    map[string]executor.Attempt
	pending []executor.Update
}

func (x *playedExecutor) Start(ctx context.Context, a executor.Attempt) error {
	x.live[a.ID] = a
	return nil
}

func (x *playedExecutor) Stop(ctx context.Context, id string, grace time.Duration) error {
	if a, ok := x.live[id]; ok {
		delete(x.live, id)
		x.pending = append(x.pending, executor.Update{AttemptID: id, JobID: a.JobID, State: executor.Stopped, Reason: "Stopped"})
	}
	return nil
}

func (x *playedExecutor) attemptOf(jobID string) (executor.Attempt, bool) {
	for _, a := range x.live {
		if a.JobID == jobID {
			return a, true
		}
	}
	return executor.Attempt{}, false
}

func (x *playedExecutor) Updates() <-chan executor.Update { return nil }

func (x *playedExecutor) Attempts(ctx context.Context) ([]executor.Update, error) {
	var out []executor.Update
	for _, id := range slices.Sorted(maps.Keys(x.live)) {
		a := x.live[id]
		out = append(out, executor.Update{AttemptID: id, JobID: a.JobID, State: executor.Running})
	}
	return out, nil
}

func (x *playedExecutor) Close() error { return nil }
