package sim_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharq-dev/sharq/internal/sim"
)

// chromiumPath is Debian's Chromium, which .ci/run installs. The test
// fails rather than skips without it: a report nobody has rendered is
// untested.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium with a fresh profile, nothing that
// reaches the network on its own, and a viewport tall enough for a short
// report.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the report's browser test needs Chromium at %s (apt-get install chromium): %v", chromiumPath, err)
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
	}
	var ended atomic.Bool // no log after the test ends
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
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 2600)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// openReport writes the report as HTML and loads it.
func openReport(t *testing.T, ctx context.Context, r *sim.Report) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(actx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("load the report: %v", err)
	}
}

// chartView is a chart as laid out: its axis titles (only those with a
// size on screen), how many tick labels its x axis has, the series each
// lane drew, and the series its legend lists.
type chartView struct {
	Class  string
	X, Y   string
	XTicks int
	Lanes  []string
	Legend []string
}

const chartsJS = `[...document.querySelectorAll('svg')].map(svg => {
  const title = axis => {
    const el = svg.querySelector('.axis-title[data-axis="' + axis + '"]');
    const r = el && el.getBoundingClientRect();
    return r && r.width > 0 && r.height > 0 ? el.textContent : '';
  };
  const lanes = [...svg.querySelectorAll('.lane')].map(l =>
    l.dataset.share + ':' + [...l.querySelectorAll('polygon')].map(p => p.getAttribute('class')).join(','));
  const legend = svg.nextElementSibling;
  return {
    Class: svg.getAttribute('class'), X: title('x'), Y: title('y'),
    XTicks: [...svg.querySelectorAll('text.tick[text-anchor="middle"]')].length,
    Lanes: lanes,
    Legend: legend && legend.classList.contains('legend') ? [...legend.querySelectorAll('span')].map(s => s.dataset.series) : null,
  };
})`

// Ensure the HTML report, as Chromium lays it out: every chart has both
// axes titled with their units and a time axis with ticks; each pool has
// a timeline of its shares' dispatches and preemptions; legends list the
// series a chart drew and no others; the colours on screen are the
// console's. The walkthrough borrows, lends and preempts; solo_fail only
// dispatches and fails a job by preemption on one share.
func TestHTMLReportInChromium(t *testing.T) {
	ctx := browser(t)
	cases := []struct {
		name, config, trace string
		want                []chartView
	}{{
		name: "walkthrough", config: "../../examples/announcement.yaml", trace: "../../examples/walkthrough.csv",
		want: []chartView{{
			Class: "capacity", Y: "instances of ml.g5.xlarge in use, on average per 5.17s", X: "time since the simulation's start (minutes)",
			Lanes:  []string{"all shares:own,borrowed", "QS1:own,borrowed", "QS2:own,lent", "QS3:"},
			Legend: []string{"own", "borrowed", "lent", "limit"},
		}, {
			Class: "timeline", Y: "jobs per 5.17s: dispatched up, preempted down", X: "time since the simulation's start (minutes)",
			Lanes:  []string{"QS1:dispatched,preempted", "QS2:dispatched", "QS3:"},
			Legend: []string{"dispatched", "preempted"},
		}, {
			Class: "waits", Y: "jobs whose waits summed to at most the time (cumulative %)", X: "time waiting for dispatch, a job's waits summed (minutes)",
			Legend: []string{"priority 1", "priority 2", "priority 3"},
		}},
	}, {
		name: "solo_fail", config: "testdata/solo.yaml", trace: "testdata/fail.csv",
		want: []chartView{{
			Class: "capacity", Y: "instances of ml.g5.xlarge in use, on average per 2.75s", X: "time since the simulation's start (minutes)",
			Lanes:  []string{"solo:own"},
			Legend: []string{"own", "limit"},
		}, {
			Class: "timeline", Y: "jobs per 2.75s: dispatched up, preempted down", X: "time since the simulation's start (minutes)",
			Lanes:  []string{"solo:dispatched,failed"},
			Legend: []string{"dispatched", "failed"},
		}, {
			Class: "waits", Y: "jobs whose waits summed to at most the time (cumulative %)", X: "time waiting for dispatch, a job's waits summed (s)",
			Legend: []string{"priority 1", "priority 5"},
		}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			openReport(t, ctx, runTrace(t, tc.config, tc.trace))
			got := evalJS[[]chartView](t, ctx, chartsJS)
			for i := range got {
				if got[i].XTicks < 3 {
					t.Errorf("%s chart: %d tick labels on its time axis", got[i].Class, got[i].XTicks)
				}
				got[i].XTicks = 0
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("charts (-want +got):\n%s", diff)
			}
			checkLegendColours(t, ctx)
			img := screenshot(t, ctx, "sim-report-"+tc.name)
			checkOwnBand(t, ctx, img)
		})
	}
}

// checkLegendColours checks that each legend swatch of a kind is drawn in
// the console's colour for it.
func checkLegendColours(t *testing.T, ctx context.Context) {
	t.Helper()
	want := map[string]string{ // app.css
		"own": "#2f6fde", "borrowed": "#f28c28", "lent": "#2bb673",
		"dispatched": "#2bb673", "preempted": "#f28c28", "failed": "#d92d20",
	}
	got := evalJS[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.legend span')]
  .map(s => [s.dataset.series, getComputedStyle(s.querySelector('i')).backgroundColor]))`)
	for series, hex := range want {
		c, ok := got[series]
		if !ok {
			continue // not drawn on this page
		}
		var r, g, b int
		fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
		if rgb := fmt.Sprintf("rgb(%d, %d, %d)", r, g, b); c != rgb {
			t.Errorf("legend %s is %s, want %s (%s)", series, c, rgb, hex)
		}
	}
}

// screenshot captures the viewport and keeps it in $SHARQ_SCREENSHOT_DIR
// when that is set, for people to look at.
func screenshot(t *testing.T, ctx context.Context, name string) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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

// checkOwnBand checks, on screen, the first capacity chart's last share
// lane: its own band (busy from start to end in both pages) is almost all
// the console's own colour.
func checkOwnBand(t *testing.T, ctx context.Context, img image.Image) {
	t.Helper()
	box := evalJS[[]float64](t, ctx, `(() => {
  const p = [...document.querySelectorAll('svg.capacity .lane polygon.own')].filter(p => p.closest('.lane').dataset.share !== 'all shares')[0];
  const r = p.getBoundingClientRect();
  return [r.x, r.y, r.width, r.height];
})()`)
	inner := image.Rect(int(box[0])+3, int(box[1])+3, int(box[0]+box[2])-6, int(box[1]+box[3])-3)
	if inner.Dx() < 100 || inner.Dy() < 10 {
		t.Fatalf("own band is %v", inner)
	}
	match, all := 0, 0
	for y := inner.Min.Y; y < inner.Max.Y; y++ {
		for x := inner.Min.X; x < inner.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			all++
			if near(r>>8, 0x2f) && near(g>>8, 0x6f) && near(b>>8, 0xde) {
				match++
			}
		}
	}
	if match*100 < all*90 {
		t.Errorf("own band %v: %d of %d pixels in the console's own colour #2f6fde", inner, match, all)
	}
}

func near(a uint32, b int) bool { return int(a)-b >= -6 && int(a)-b <= 6 }

// Ensure a pool of more shares than the charts have lanes for shows the
// busiest in lanes of their own and the rest together, in both charts.
func TestHTMLManyShares(t *testing.T) {
	w, err := sim.Builtin("random:jobs=300,shares=15,load=1.2,runtime=600", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := mustRun(t, w, nil, sim.Options{}).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, class := range []string{"capacity", "timeline"} {
		i := strings.Index(page, `<svg class="`+class+`"`)
		if i < 0 {
			t.Fatalf("no %s chart", class)
		}
		chart := page[i : i+strings.Index(page[i:], "</svg>")]
		lanes := regexp.MustCompile(`<g class="lane" data-share="([^"]*)"`).FindAllStringSubmatch(chart, -1)
		want := 12 // 11 shares and the others
		if class == "capacity" {
			want++ // and the whole pool
		}
		if len(lanes) != want || lanes[len(lanes)-1][1] != "4 others" {
			t.Errorf("%s chart: %d lanes, the last %q; want %d, the last \"4 others\"", class, len(lanes), lanes[len(lanes)-1][1], want)
		}
	}
}
