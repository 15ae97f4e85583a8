package sim_test

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/sim"
)

// chromium returns the headless browser, skipping the test where there is
// none, except on CI, whose set-up installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs it)")
	}
	t.Skip("chromium is not installed")
	return ""
}

// headless runs chromium on a file with flags that keep it off the network
// and out of any profile, and returns what it printed.
func headless(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	out, err := exec.CommandContext(ctx, bin, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// Ensure the HTML report renders in a browser: it holds the charts and
// tables, and Chromium's screenshot of it shows them.
func TestHTMLRenders(t *testing.T) {
	bin := chromium(t)
	w, err := sim.Builtin("random:jobs=200,shares=3,load=1.2,runtime=600", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, w, nil, sim.Options{CheckpointInterval: 5 * time.Minute})
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<svg class="capacity"`, `<polygon fill="hsl(`, `<svg class="waits"`, `<table id="summary">`, "team-00 own"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// One browser run: each costs seconds on a busy machine.
	shot := filepath.Join(t.TempDir(), "report.png")
	headless(t, bin, "--window-size=1000,900", "--screenshot="+shot, "file://"+page)
	checkNotBlank(t, shot)
}

// checkNotBlank fails unless a good part of the image is in colour: text
// and rules are grey, the charts' bands are not.
func checkNotBlank(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	coloured, all := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				coloured++
			}
		}
	}
	if coloured*100 < all {
		t.Errorf("screenshot %dx%d: %d of %d pixels in colour; the charts did not render", b.Dx(), b.Dy(), coloured, all)
	}
}
