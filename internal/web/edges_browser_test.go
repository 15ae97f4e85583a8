package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/record"
	"github.com/sharq-dev/sharq/internal/web"
)

// longName is a job name of AWS's maximum length with no break in it.
var longName = strings.Repeat("llama3-70b-finetune-", 5) + "instruct-lr3e-5-warmup-run07"

// TestConsoleEdges checks in Chromium what a first day trips over: long
// names stay inside their cards and table cells (cut with an ellipsis, the
// whole name on hover) and wrap on the job's page; jobs are named as the
// CLI names them, name and short ID, in links and reasons; the page of a
// job that does not exist shows no controls.
func TestConsoleEdges(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	w := s.step1()
	waiting := s.submit(longName, "QS1", 0)
	running := s.submit(longName, "QS3", 0)
	s.wait(waiting, "RUNNABLE")
	s.wait(running, "RUNNING")
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "both long-named jobs", `document.querySelector('.front a[data-job-link="`+waiting+`"]') !== null &&
		document.querySelector('table a[data-job-link="`+running+`"]') !== null`)
	screenshot(t, ctx, "console-long-names")
	for _, sel := range []string{`.front li[data-job="` + waiting + `"]`, `tr[data-job="` + running + `"]`} {
		fits := eval[bool](t, ctx, `(() => {
			const row = document.querySelector('`+sel+`');
			const link = row.querySelector('a.job-link'), name = link.querySelector('.job-name');
			const box = row.closest('.front, section').getBoundingClientRect(), r = link.getBoundingClientRect();
			return name.scrollWidth > name.clientWidth && r.right <= box.right && row.scrollWidth <= row.clientWidth + 1;
		})()`)
		if !fits {
			t.Errorf("%s: the long name is not cut inside its box", sel)
		}
		title := eval[string](t, ctx, `document.querySelector('`+sel+` a.job-link').title`)
		if want := longName + " (" + running[len(running)-8:] + ")"; sel[0] == 't' && title != want {
			t.Errorf("title %q, want %q", title, want)
		}
	}
	label := eval[string](t, ctx, `document.querySelector('.front a[data-job-link="`+w.low+`"]').textContent`)
	if want := "qs1_job_low (" + w.low[len(w.low)-8:] + ")"; label != want {
		t.Errorf("link %q, want %q", label, want)
	}
	reason := eval[string](t, ctx, `document.querySelector('.front li[data-job="`+waiting+`"] .reason').textContent`)
	if want := "qs1_job_low (" + w.low[len(w.low)-8:] + ")"; !strings.Contains(reason, want) {
		t.Errorf("reason %q does not name %q", reason, want)
	}

	do(t, ctx, "open the long-named job", chromedp.Navigate(s.url+"/jobs/"+running))
	waitFor(t, ctx, "its page", `document.querySelector('#job-status') !== null`)
	if !eval[bool](t, ctx, `(() => { const h = document.querySelector('#job-head');
		return h.scrollWidth <= h.clientWidth && document.querySelector('.job-title').textContent.includes('`+longName+`'); })()`) {
		t.Error("the job page's title overflows or lacks the whole name")
	}
	screenshot(t, ctx, "job-long-name")

	unknown := "01a22d8d-0000-7000-8000-000000000000"
	do(t, ctx, "open a job that does not exist", chromedp.Navigate(s.url+"/jobs/"+unknown))
	waitFor(t, ctx, "the error", `document.querySelector('#job-head .msg.err') !== null`)
	screenshot(t, ctx, "job-unknown")
	if n := eval[int](t, ctx, `document.querySelectorAll('#job-actions, #priority-input, #terminate, #timeline, #logs').length`); n != 0 {
		t.Errorf("the page of an unknown job shows %d controls or panels", n)
	}
	if text := eval[string](t, ctx, `document.querySelector('#job-head').textContent`); !strings.Contains(text, "does not exist") {
		t.Errorf("the page says %q", text)
	}
}

// TestConsoleOversizedLimit: a share whose limit is above its environment's
// capacity carries a warning badge that says so, within its card; the
// others carry none.
func TestConsoleOversizedLimit(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	if _, err := s.eng.UpdateQuotaShare(t.Context(), batchmodel.UpdateQuotaShareInput{QuotaShareArn: "arn:aws:batch:us-east-1:000000000000:job-queue/" + queue + "/quota-share/QS1",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 5}}}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the shares", `document.querySelector('tr[data-share-row="QS3"]') !== null`)
	screenshot(t, ctx, "console-oversized-limit")
	want := "limit of 5 ml.g5.xlarge above the 3 of service environment my-sm-training-qm-se: it can never hold more than 3"
	if got := eval[string](t, ctx, `(() => { const b = document.querySelector('tr[data-share-row="QS1"] .badge.warn'); return b ? b.title : ''; })()`); got != want {
		t.Errorf("QS1's warning %q, want %q", got, want)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('tr[data-share-row="QS2"] .badge.warn, tr[data-share-row="QS3"] .badge.warn').length`); n != 0 {
		t.Errorf("%d warnings on QS2 and QS3", n)
	}
	if !eval[bool](t, ctx, `(() => { const b = document.querySelector('tr[data-share-row="QS1"] .badge.warn').getBoundingClientRect(),
		c = document.querySelector('tr[data-share-row="QS1"]').closest('section').getBoundingClientRect();
		return b.left >= c.left && b.right <= c.right; })()`) {
		t.Error("QS1's warning sticks out of its card")
	}
}

// TestConsoleMinimumRuntime: a share with a minimum runtime before
// preemption says so in a badge of its row; the others carry none.
func TestConsoleMinimumRuntime(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	if _, err := s.eng.SetQuotaShareMinimumRuntime(t.Context(), "arn:aws:batch:us-east-1:000000000000:job-queue/"+queue+"/quota-share/QS2", 300); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the shares", `document.querySelector('tr[data-share-row="QS3"]') !== null`)
	if got := eval[string](t, ctx, `(() => { const b = document.querySelector('tr[data-share-row="QS2"] .badge.min-runtime'); return b ? b.textContent + ' | ' + b.title : ''; })()`); got != "min runtime 300s | a job of this share is not preempted in its first 300s (minimum runtime)" {
		t.Errorf("QS2's minimum runtime badge says %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('tr[data-share-row="QS1"] .badge.min-runtime, tr[data-share-row="QS3"] .badge.min-runtime').length`); n != 0 {
		t.Errorf("%d minimum runtime badges on QS1 and QS3", n)
	}
}

// heldStops is an executor whose stops take effect only when released: a
// victim's processes that take their grace period.
type heldStops struct {
	executor.Executor
	mu   sync.Mutex
	held []string
}

func (h *heldStops) Stop(_ context.Context, id string, _ time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = append(h.held, id)
	return nil
}

func (h *heldStops) release(t *testing.T) {
	h.mu.Lock()
	ids := h.held
	h.held = nil
	h.mu.Unlock()
	for _, id := range ids {
		if err := h.Executor.Stop(context.Background(), id, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleWaitingForVictim: while a preempted job's processes stop,
// the preemptor's row among the jobs holding capacity says what it waits
// for; once it runs, it says nothing.
func TestConsoleWaitingForVictim(t *testing.T) {
	var held *heldStops
	s := startExecutor(t, web.Options{}, access.AuthenticatorFunc(func(*http.Request) (access.Identity, error) { return tester, nil }),
		func(ex executor.Executor) executor.Executor { held = &heldStops{Executor: ex}; return held })
	s.setupWalkthrough()
	s.wait(s.submit("a1", "QS1", 1), "RUNNING")
	a2 := s.submit("a2", "QS1", 1) // borrows QS2's idle instance
	s.wait(a2, "RUNNING")
	d1 := s.submit("d1", "QS2", 1) // takes it back
	s.wait(d1, "SCHEDULED")
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	want := "waiting for the preempted job a2 (" + a2[len(a2)-8:] + ") in share QS1 to stop: up to 120s"
	waitFor(t, ctx, "d1 waiting for a2", `(() => { const w = document.querySelector('tr[data-job="`+d1+`"] .waiting-for');
		return w !== null && w.textContent === '`+want+`'; })()`)
	screenshot(t, ctx, "console-waiting-for-victim")
	held.release(t)
	s.wait(d1, "RUNNING")
	waitFor(t, ctx, "d1 running, waiting for nothing", `(() => { const r = document.querySelector('tr[data-job="`+d1+`"]');
		return r !== null && r.textContent.includes('RUNNING') && r.querySelector('.waiting-for') === null; })()`)
}

// TestConsoleFairShareQueue: a fair-share queue shows its share
// identifiers as its rows, with the strategy FAIR_SHARE, and a waiting
// job's reason in the identifier's front says how much it used.
func TestConsoleFairShareQueue(t *testing.T) {
	s := start(t)
	ctx0 := t.Context()
	p, err := s.eng.CreateSchedulingPolicy(ctx0, batchmodel.CreateSchedulingPolicyInput{Name: "fair",
		FairsharePolicy: []byte(`{"shareDecaySeconds":3600,"computeReservation":0,"shareDistribution":[{"shareIdentifier":"blue","weightFactor":0.5}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.CreateServiceEnvironment(ctx0, batchmodel.CreateServiceEnvironmentInput{Name: "fse", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.CreateJobQueue(ctx0, batchmodel.CreateJobQueueInput{Name: "fq", Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "fse"}}, SchedulingPolicyArn: p.Arn}); err != nil {
		t.Fatal(err)
	}
	submit := func(name, id string) string {
		j, err := s.eng.SubmitServiceJob(ctx0, engine.SubmitServiceJobInput{JobName: name, JobQueue: "fq", ServiceJobType: "SAGEMAKER_TRAINING",
			ServiceRequestPayload: `{"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1},"StoppingCondition":{"MaxRuntimeInSeconds":3600}}`,
			ShareIdentifier:       id})
		if err != nil {
			t.Fatal(err)
		}
		return j.JobID
	}
	s.wait(submit("red1", "red"), dispatched...)
	submit("red2", "red")
	ctx := browser(t)
	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the identifiers", `document.querySelector('tr[data-share-row="red"]') !== null`)
	screenshot(t, ctx, "console-fair-share")
	if got := eval[string](t, ctx, `document.querySelector('tr[data-share-row="red"]').textContent`); !strings.Contains(got, "FAIR_SHARE") {
		t.Errorf("red's row says %q, want the strategy FAIR_SHARE", got)
	}
	waitFor(t, ctx, "red2's reason", `Array.from(document.querySelectorAll('.reason')).some(e => e.textContent.includes('share identifier red has used'))`)
}
