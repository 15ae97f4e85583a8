package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/batchmodel"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/record"
)

// setupBorrowing creates the walkthrough's shares with room to borrow: an
// environment of 5 ml.g5.xlarge, one beyond the shares' limits (QS1 1, QS2
// 2, QS3 1).
func (s *server) setupBorrowing() {
	s.t.Helper()
	ctx := context.Background()
	must := func(err error) {
		s.t.Helper()
		if err != nil {
			s.t.Fatal(err)
		}
	}
	p, err := s.eng.CreateSchedulingPolicy(ctx, batchmodel.CreateSchedulingPolicyInput{Name: "my-qm-scheduling-policy",
		QuotaSharePolicy: &record.QuotaSharePolicy{IdleResourceAssignmentStrategy: "FIFO"}})
	must(err)
	_, err = s.eng.CreateServiceEnvironment(ctx, batchmodel.CreateServiceEnvironmentInput{Name: "my-sm-training-qm-se", Type: "SAGEMAKER_TRAINING",
		CapacityLimits: []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: 5}}})
	must(err)
	_, err = s.eng.CreateJobQueue(ctx, batchmodel.CreateJobQueueInput{Name: queue, Priority: 1, Type: "SAGEMAKER_TRAINING",
		ServiceEnvironmentOrder: []record.ServiceEnvironmentOrder{{Order: 1, ServiceEnvironment: "my-sm-training-qm-se"}}, SchedulingPolicyArn: p.Arn})
	must(err)
	for _, sh := range []struct {
		name, strategy string
		limit          int
		borrow         *int
	}{{"QS1", "LEND_AND_BORROW", 1, ptr(200)}, {"QS2", "LEND", 2, nil}, {"QS3", "RESERVE", 1, nil}} {
		_, err = s.eng.CreateQuotaShare(ctx, batchmodel.CreateQuotaShareInput{Name: sh.name, JobQueue: queue,
			CapacityLimits:               []record.CapacityLimit{{CapacityUnit: "ml.g5.xlarge", MaxCapacity: sh.limit}},
			ResourceSharingConfiguration: record.ResourceSharingConfiguration{Strategy: sh.strategy, BorrowLimit: sh.borrow},
			PreemptionConfiguration:      record.QuotaSharePreemptionConfiguration{InSharePreemption: "DISABLED"}})
		must(err)
	}
}

// submitN submits a job of count instances that runs until it is stopped.
func (s *server) submitN(name, share string, count int) string {
	s.t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"ResourceConfig": map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": count},
	})
	prio := 0
	j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: string(payload), QuotaShareName: share, SchedulingPriority: &prio})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.JobID
}

// label is a bar segment's label as the page lays it out.
type label struct {
	Share, Kind, Other, Text string
	Clipped                  bool // cut with an ellipsis
	X, Y, W, H               float64
	SX, SW                   float64 // the segment's left edge and width
}

const labelsJS = `[...document.querySelectorAll('.bar .seg-label')].map(l => {
  const s = l.parentElement, r = l.getBoundingClientRect(), sr = s.getBoundingClientRect();
  return {Share: s.parentElement.dataset.share, Kind: s.classList[1], Other: s.dataset.lender ?? s.dataset.borrower ?? '',
    Text: l.textContent, Clipped: l.scrollWidth > l.clientWidth, X: r.x, Y: r.y, W: r.width, H: r.height, SX: sr.x, SW: sr.width};
})`

// TestConsoleProvenance shows, in headless Chromium, whose capacity running
// jobs hold: QS1 runs b1 on its own instance and one nobody owns, and b2
// on QS2's, which QS2 will take back for q2. The bars split borrowed and
// lent capacity by share and write the other share's name on each
// segment; the holding-capacity table says the same per job; and when QS2
// takes its instance back, the page follows.
func TestConsoleProvenance(t *testing.T) {
	s := start(t)
	s.setupBorrowing()
	b1 := s.submitN("b1", "QS1", 2)
	s.wait(b1, "RUNNING")
	b2 := s.submitN("b2", "QS1", 1)
	s.wait(b2, "RUNNING")
	q1 := s.submitN("q1", "QS2", 1)
	s.wait(q1, "RUNNING")
	q2 := s.submitN("q2", "QS2", 2)
	s.wait(q2, "RUNNABLE")
	b3 := s.submitN("b3", "QS1", 1)
	s.wait(b3, "RUNNABLE")
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the reclaimable loan", `document.querySelector('.bar[data-share="QS1"] .seg.borrowed.reclaimable[data-lender="QS2"]') !== null &&
		document.querySelector('tr[data-job="`+b2+`"] .reclaim-badge') !== null`)
	eval[bool](t, ctx, `window.sharqTestMark = 'still here'; true`)
	img := screenshot(t, ctx, "console-provenance")
	checkBars(t, img, eval[[]segment](t, ctx, segmentsJS), map[string][]string{
		"QS1": {"own", "borrowed", "borrowed"}, "QS2": {"own", "lent"}, "QS3": {"reserved"}})

	// Each borrowed segment names its lender, each lent one its borrower,
	// in full, on the segment, drawn in white.
	var got []string
	for _, l := range eval[[]label](t, ctx, labelsJS) {
		got = append(got, fmt.Sprintf("%s %s %q: %s", l.Share, l.Kind, l.Other, l.Text))
		if l.Clipped || l.W < 10 || l.X < l.SX-0.5 || l.X+l.W > l.SX+l.SW+0.5 {
			t.Errorf("label %q of %s's %s segment: clipped %v, at x %.0f-%.0f, segment %.0f-%.0f", l.Text, l.Share, l.Kind, l.Clipped, l.X, l.X+l.W, l.SX, l.SX+l.SW)
		}
		r := image.Rect(int(l.X), int(l.Y), int(l.X+l.W), int(l.Y+l.H))
		if frac := colourShare(img, r, image.Rectangle{}, color.RGBA{0xff, 0xff, 0xff, 0xff}); frac < 0.05 {
			t.Errorf("label %q: %.0f%% of its box is white: the name is not drawn", l.Text, 100*frac)
		}
	}
	want := []string{`QS1 borrowed "": spare`, `QS1 borrowed "QS2": from QS2 ↺`, `QS2 lent "QS1": to QS1`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("segment labels:\n%v\nwant\n%v", got, want)
	}

	// The table of jobs holding capacity, and the waiting reasons that say
	// why idle capacity is no use.
	rows := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('table.holding tbody tr')].map(tr =>
		[tr.dataset.job, tr.querySelector('.holding-cell').textContent]))`)
	if want := map[string]string{b1: "own + spare", b2: "from QS2reclaimable by QS2", q1: "own"}; fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("holding table: %v, want %v", rows, want)
	}
	reasons := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.front li')].map(li =>
		[li.dataset.job, li.querySelector('.reason').textContent]))`)
	if want := map[string]string{
		b3: "QS1 at its limit of 1 ml.g5.xlarge and at its borrow limit of 2",
		q2: "QS2 at its limit of 2 ml.g5.xlarge",
	}; fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Errorf("waiting reasons: %v, want %v", reasons, want)
	}
	do(t, ctx, "scroll to the table", chromedp.ScrollIntoView(chromedp.CSS(`table.holding`)))
	screenshot(t, ctx, "console-provenance-holding")

	// q1 ends: q2 needs both of QS2's instances and takes back the one b2
	// borrows. The page follows without reloading.
	if err := s.eng.TerminateServiceJob(context.Background(), q1, "done"); err != nil {
		t.Fatal(err)
	}
	s.wait(q2, "RUNNING")
	s.wait(b2, "RUNNABLE")
	waitFor(t, ctx, "QS2 to hold its own again", `document.querySelector('.bar[data-share="QS2"] .seg.lent') === null &&
		document.querySelector('.bar[data-share="QS1"] .seg.borrowed[data-lender="QS2"]') === null &&
		document.querySelector('.reclaim-badge') === null`)
	if mark := eval[string](t, ctx, `window.sharqTestMark || ''`); mark != "still here" {
		t.Fatal("the page reloaded to show the change")
	}
	img = screenshot(t, ctx, "console-provenance-reclaimed")
	checkBars(t, img, eval[[]segment](t, ctx, segmentsJS), map[string][]string{
		"QS1": {"own", "borrowed"}, "QS2": {"own"}, "QS3": {"reserved"}})

	// b1's page says what it runs on.
	do(t, ctx, "open b1", chromedp.Navigate(s.url+"/jobs/"+b1))
	waitFor(t, ctx, "b1's capacity", `document.querySelector('#job-holding') !== null`)
	if text := eval[string](t, ctx, `document.querySelector('#job-holding').textContent`); text != "own + spare 1 × ml.g5.xlarge own, 1 × ml.g5.xlarge borrowed from spare capacity (beyond the share limits)" {
		t.Errorf("b1's page says it runs on %q", text)
	}
	screenshot(t, ctx, "job-provenance")
}
