package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sharq-dev/sharq/internal/testwait"
)

// chromiumPath is Debian's Chromium, which .ci/run installs. The browser
// tests fail rather than skip without it: a console nobody has rendered is
// untested.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium for the test, with a fresh profile and
// nothing that reaches the network on its own.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the console tests need Chromium at %s (apt-get install chromium): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-default-browser-check", true),
		// Colours in screenshots are the CSS values, whatever the machine.
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	// The browser's messages go to the test log until the test ends; a
	// late one after that would make testing panic.
	var ended atomic.Bool
	logf := func(format string, args ...any) {
		if !ended.Load() {
			t.Logf(format, args...)
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	t.Cleanup(func() {
		ended.Store(true)
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// do runs browser steps with a time limit.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript predicate in the page for up to 15 s. Errors
// count as false: while a click navigates, the page being left has no
// context to evaluate in.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	testwait.Until(t, 15*time.Second, func() error {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(actx, chromedp.Evaluate[bool]("!!("+js+")"))
		cancel()
		if err == nil && ok {
			return nil
		}
		return notYet{ctx, what, err}
	})
}

// notYet is waitFor's failure; it reads the page only when it is told.
type notYet struct {
	ctx  context.Context
	what string
	err  error
}

func (e notYet) Error() string {
	text, _ := chromedp.Run(e.ctx, chromedp.Evaluate[string]("document.body.innerText"))
	return fmt.Sprintf("waiting for %s: not true (last error: %v); the page says:\n%s", e.what, e.err, text)
}

// screenshot captures the viewport and keeps it in $SHARQ_SCREENSHOT_DIR
// when that is set, for people to look at.
func screenshot(t *testing.T, ctx context.Context, name string) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if dir := os.Getenv("SHARQ_SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Error(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// segment is a bar segment as laid out in the page, in CSS pixels, with
// the box of the label written on it, if any.
type segment struct {
	Share, Kind    string
	N              int
	X, Y, W, H     float64
	LX, LY, LW, LH float64
}

const segmentsJS = `[...document.querySelectorAll('.bar .seg')].map(s => {
  const r = s.getBoundingClientRect();
  const l = s.querySelector('.seg-label');
  const lr = l ? l.getBoundingClientRect() : {x: 0, y: 0, width: 0, height: 0};
  return {Share: s.parentElement.dataset.share, Kind: s.classList[1], N: Number(s.dataset.n), X: r.x, Y: r.y, W: r.width, H: r.height,
    LX: lr.x, LY: lr.y, LW: lr.width, LH: lr.height};
})`

// The segment colours of app.css.
var segmentColours = map[string]color.RGBA{
	"own":      {0x2f, 0x6f, 0xde, 0xff},
	"borrowed": {0xf2, 0x8c, 0x28, 0xff},
	"lent":     {0x2b, 0xb6, 0x73, 0xff},
	"idle":     {0xcf, 0xd6, 0xdf, 0xff},
	"reserved": {0x8e, 0x6a, 0xd8, 0xff},
}

// checkBars checks, in the screenshot, that each wanted share shows the
// wanted segments: each segment's area is almost all its colour, and the
// bar's track beyond the segments is not.
func checkBars(t *testing.T, img image.Image, segs []segment, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, s := range segs {
		got[s.Share] = append(got[s.Share], s.Kind)
		if s.W < 20 || s.H < 10 {
			t.Errorf("%s %s segment is %.0fx%.0f px", s.Share, s.Kind, s.W, s.H)
			continue
		}
		// The inner part of the segment, away from borders and the white
		// separator between segments.
		r := image.Rect(int(s.X)+3, int(s.Y)+3, int(s.X+s.W)-3, int(s.Y+s.H)-3)
		label := image.Rect(int(s.LX), int(s.LY), int(s.LX+s.LW)+1, int(s.LY+s.LH)+1)
		if frac := colourShare(img, r, label, segmentColours[s.Kind]); frac < 0.95 {
			t.Errorf("%s %s segment: %.0f%% of its pixels have its colour", s.Share, s.Kind, 100*frac)
		}
	}
	for share, kinds := range want {
		if fmt.Sprint(got[share]) != fmt.Sprint(kinds) {
			t.Errorf("share %s shows segments %v, want %v", share, got[share], kinds)
		}
	}
}

// colourShare is the fraction of r's pixels, those in skip left out, within
// a small distance of c.
func colourShare(img image.Image, r, skip image.Rectangle, c color.RGBA) float64 {
	r = r.Intersect(img.Bounds())
	match, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if image.Pt(x, y).In(skip) {
				continue
			}
			all++
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, c.R) && near(pg>>8, c.G) && near(pb>>8, c.B) {
				match++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(match) / float64(all)
}

func near(a uint32, b uint8) bool {
	d := int(a) - int(b)
	return d >= -6 && d <= 6
}

// TestConsoleInBrowser drives the walkthrough with the console open in
// headless Chromium: the capacity bars render in their colours, the page
// follows the scheduler without reloading, and a priority changed in the
// page changes the job on the server, which then preempts as the
// walkthrough says. Terminating from the page ends a job.
func TestConsoleInBrowser(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	w := s.step1()
	ctx := browser(t)

	do(t, ctx, "load the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the bars", `document.querySelector('.bar[data-share="QS3"] .seg.reserved') !== null &&
		document.querySelector('.bar[data-share="QS1"] .seg.borrowed') !== null`)
	// A mark that a reload would erase.
	eval[bool](t, ctx, `window.sharqTestMark = 'still here'; true`)
	img := screenshot(t, ctx, "console-step1")
	segs := eval[[]segment](t, ctx, segmentsJS)
	checkBars(t, img, segs, map[string][]string{"QS1": {"own", "borrowed"}, "QS2": {"lent"}, "QS3": {"reserved"}})
	checkFront(t, ctx, "QS1", w.low)

	// Live: the page follows a submission made behind its back.
	s.step2(&w)
	waitFor(t, ctx, "QS2 to run its own job", `document.querySelector('.bar[data-share="QS2"] .seg.own') !== null &&
		document.querySelector('.bar[data-share="QS1"] .seg.borrowed') === null &&
		document.querySelector('#events li[data-job="`+w.qs2+`"][data-status="RUNNING"]') !== null`)
	if mark := eval[string](t, ctx, `window.sharqTestMark || ''`); mark != "still here" {
		t.Fatal("the page reloaded to show the change")
	}
	img = screenshot(t, ctx, "console-step2")
	checkBars(t, img, eval[[]segment](t, ctx, segmentsJS), map[string][]string{"QS1": {"own"}, "QS2": {"own"}, "QS3": {"reserved"}})

	// Change low's priority from its page, reached through its link.
	do(t, ctx, "open qs1_job_low", chromedp.Click(chromedp.CSS(`.front a[data-job-link="`+w.low+`"]`)))
	waitFor(t, ctx, "the job page", `document.querySelector('#priority-input') !== null && document.querySelector('#priority-input').value === '1'`)
	eval[bool](t, ctx, `(() => { const i = document.querySelector('#priority-input'); i.value = '4';
		i.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
	do(t, ctx, "set the priority", chromedp.Click(chromedp.CSS(`#priority-set`)))
	waitFor(t, ctx, "the confirmation", `document.querySelector('#action-msg').textContent === 'Priority set to 4.'`)
	if j := s.wait(w.low, dispatched...); j.SchedulingPriority != 4 {
		t.Fatalf("server has priority %d for qs1_job_low", j.SchedulingPriority)
	}
	s.step3wait(w)
	waitFor(t, ctx, "the job page to show it running", `document.querySelector('#job-status').textContent === 'RUNNING' &&
		document.querySelector('#job-priority').textContent === '4'`)
	screenshot(t, ctx, "job-low")

	// The preempted job's page shows its preemption in the timeline.
	do(t, ctx, "open qs1_job_high", chromedp.Navigate(s.url+"/jobs/"+w.high))
	waitFor(t, ctx, "the preemption in the timeline", `document.querySelector('#timeline li.preempted') !== null &&
		document.querySelector('#job-position') !== null`)
	screenshot(t, ctx, "job-high")

	// Terminate qs2_job_1 from its page: two clicks.
	do(t, ctx, "open qs2_job_1", chromedp.Navigate(s.url+"/jobs/"+w.qs2))
	waitFor(t, ctx, "the job page", `document.querySelector('#job-status') !== null && !document.querySelector('#terminate').disabled`)
	do(t, ctx, "terminate", chromedp.Click(chromedp.CSS(`#terminate`)), chromedp.Click(chromedp.CSS(`#terminate`)))
	if j := s.wait(w.qs2, "FAILED"); !j.IsTerminated {
		t.Errorf("qs2_job_1 ended but is not marked terminated: %+v", j)
	}
	waitFor(t, ctx, "the page to show it failed", `document.querySelector('#job-status').textContent === 'FAILED'`)

	// QS2's instance is lent to QS1's head, qs1_job_high, once free.
	s.wait(w.high, "RUNNING")
	do(t, ctx, "back to the console", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "QS1 borrowing again", `document.querySelector('.bar[data-share="QS1"] .seg.borrowed') !== null`)
	img = screenshot(t, ctx, "console-end")
	checkBars(t, img, eval[[]segment](t, ctx, segmentsJS), map[string][]string{"QS1": {"own", "borrowed"}, "QS2": {"lent"}, "QS3": {"reserved"}})
}

// checkFront checks the share's waiting list starts with the job, at #1,
// with a reason.
func checkFront(t *testing.T, ctx context.Context, share, id string) {
	t.Helper()
	got := eval[[]string](t, ctx, `[...document.querySelectorAll('.front[data-front="`+share+`"] li')].map(li =>
		li.dataset.job + ' ' + li.querySelector('.pos').textContent + ' ' + (li.querySelector('.reason').textContent ? 'reason' : 'none'))`)
	if want := id + " #1 reason"; len(got) == 0 || got[0] != want {
		t.Errorf("front of %s = %v, want %q first", share, got, want)
	}
}
