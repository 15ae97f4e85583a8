package web_test

import (
	"context"
	"encoding/json"
	"image"
	"image/color"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/engine"
)

// submitBounded submits a job of count instances with a max runtime in
// seconds (none when 0); the simulated executor runs it that long.
func (s *server) submitBounded(name, share string, count, maxRuntime int) string {
	s.t.Helper()
	p := map[string]any{"ResourceConfig": map[string]any{"InstanceType": "ml.g5.xlarge", "InstanceCount": count}}
	if maxRuntime > 0 {
		p["StoppingCondition"] = map[string]any{"MaxRuntimeInSeconds": maxRuntime}
	}
	payload, _ := json.Marshal(p)
	prio := 0
	j, err := s.eng.SubmitServiceJob(context.Background(), engine.SubmitServiceJobInput{JobName: name, JobQueue: queue,
		ServiceJobType: "SAGEMAKER_TRAINING", ServiceRequestPayload: string(payload), QuotaShareName: share, SchedulingPriority: &prio})
	if err != nil {
		s.t.Fatal(err)
	}
	return j.JobID
}

// TestConsoleETA checks in Chromium that the queue cards tell when each
// waiting job is expected to start, and the job's page says it in full
// with what it rests on, and that both follow the scheduler. QS3 keeps its
// one instance to itself: first holds it for 600 s, then second (300 s),
// then third, which declares no run time; fourth, behind third, has no
// basis; big can never fit in QS3.
func TestConsoleETA(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	first := s.submitBounded("first", "QS3", 1, 600)
	s.wait(first, "RUNNING")
	second := s.submitBounded("second", "QS3", 1, 300)
	third := s.submitBounded("third", "QS3", 1, 0)
	fourth := s.submitBounded("fourth", "QS3", 1, 60)
	big := s.submitBounded("big", "QS3", 2, 60)
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	card := func(id string) string {
		return `document.querySelector('.front[data-front="QS3"] li[data-job="` + id + `"] .eta')`
	}
	waitFor(t, ctx, "every estimate", card(second)+`?.dataset.eta === 'ESTIMATED' && `+card(third)+`?.dataset.eta === 'ESTIMATED' && `+
		card(fourth)+`?.dataset.eta === 'NO_BASIS' && `+card(big)+`?.dataset.eta === 'NEVER'`)
	img := screenshot(t, ctx, "console-eta")
	texts := map[string]*regexp.Regexp{
		second: regexp.MustCompile(`^starts in ~(9|10)m, at \d\d:\d\d:\d\d$`),
		third:  regexp.MustCompile(`^starts in ~1[45]m, at \d\d:\d\d:\d\d$`),
		fourth: regexp.MustCompile(`^start unknown$`),
		big:    regexp.MustCompile(`^never starts as configured$`),
	}
	for id, re := range texts {
		if got := eval[string](t, ctx, card(id)+`.textContent`); !re.MatchString(got) {
			t.Errorf("card of %s says %q, want %s", id, got, re)
		}
	}
	box := eval[segment](t, ctx, `(() => { const r = `+card(second)+`.getBoundingClientRect();
		return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`)
	r := image.Rect(int(box.X), int(box.Y), int(box.X+box.W), int(box.Y+box.H))
	if frac := colourShare(img, r, image.Rectangle{}, color.RGBA{0x1d, 0x4f, 0xa8, 0xff}); frac < 0.03 {
		t.Errorf("the estimate of second is not drawn in its colour (%.1f%% of its box)", 100*frac)
	}

	do(t, ctx, "open second's page", chromedp.Click(chromedp.CSS(`.front a[data-job-link="`+second+`"]`)))
	waitFor(t, ctx, "its estimate", `document.querySelector('#job-eta')?.textContent.includes('estimated from max runtime')`)
	if got := eval[string](t, ctx, `document.querySelector('#job-eta').textContent`); !regexp.MustCompile(`^\w+ \d+ \d\d:\d\d:\d\d \(in (9|10)m\), estimated from max runtime$`).MatchString(got) {
		t.Errorf("second's page says %q", got)
	}
	screenshot(t, ctx, "job-eta")

	// first ends early: second runs, and third now waits for second's 300 s.
	if err := s.eng.TerminateServiceJob(context.Background(), first, "make room"); err != nil {
		t.Fatal(err)
	}
	s.wait(second, "RUNNING")
	do(t, ctx, "back to the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "third's estimate to move up", card(third)+`?.textContent.match(/^starts in ~[45]m/)`)
}
