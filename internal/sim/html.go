package sim

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// WriteHTML writes the report as one offline HTML page: tables, and charts
// as inline SVG (capacity over time stacked by share, per pool; the
// distribution of time to dispatch). It loads nothing from anywhere.
func (r *Report) WriteHTML(w io.Writer) error {
	b := &strings.Builder{}
	title := "sharq sim: " + r.Workload
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s</style></head><body>\n", esc(title), css)
	fmt.Fprintf(b, "<h1>%s</h1>\n", esc(title))
	r.htmlBody(b)
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) htmlBody(b *strings.Builder) {
	r.htmlSummary(b)
	for i, p := range r.Pools {
		r.htmlPool(b, i, p)
	}
	r.htmlWaits(b)
	r.htmlPreemptions(b)
}

const css = `body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}
th:first-child,td:first-child{text-align:left}h2{margin-top:2em}svg{background:#fafafa;border:1px solid #ddd}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}`

func esc(s string) string { return html.EscapeString(s) }

func (r *Report) htmlSummary(b *strings.Builder) {
	j := r.Jobs
	b.WriteString("<table id=\"summary\">\n")
	rows := [][2]string{
		{"jobs", fmt.Sprintf("%d (%d succeeded, %d failed, %d cancelled, %d rejected, %d never ran)", j.Total, j.Succeeded, j.Failed, j.Cancelled, j.Rejected, j.NeverRan)},
		{"makespan", secs(r.Makespan)},
		{"utilisation", pct(r.Utilisation)},
		{"average share usage", pct(r.AverageShareUsage)},
		{"time to dispatch p50 / p95 / p99 / max", fmt.Sprintf("%s / %s / %s / %s", secs(r.Waits.All.P50), secs(r.Waits.All.P95), secs(r.Waits.All.P99), secs(r.Waits.All.Max))},
		{"preemptions", fmt.Sprintf("%d cross-share, %d in-share, %d failed the job", r.Preemptions.CrossShare, r.Preemptions.InShare, r.Preemptions.RetriesExhausted)},
		{"GPU-hours lost to preemption", fmt.Sprintf("%.2f (checkpoint interval %s)", r.Preemptions.LostGPUHours, checkpointText(r.CheckpointInterval))},
	}
	for _, row := range rows {
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(row[0]), esc(row[1]))
	}
	b.WriteString("</table>\n")
}

// color gives series i a fixed, distinguishable colour.
func color(i int, light bool) string {
	l := 45
	if light {
		l = 75
	}
	return fmt.Sprintf("hsl(%d,65%%,%d%%)", (i*137)%360, l)
}

// Chart geometry.
const (
	chartW, chartH = 900, 260
	padL, padB     = 50, 24
	maxStacked     = 11 // more shares than this stack as "others"
)

func (r *Report) htmlPool(b *strings.Builder, i int, p PoolReport) {
	fmt.Fprintf(b, "<h2>%s: %d × %s</h2>\n", esc(p.Queue), p.Capacity, esc(p.Unit))
	if r.series != nil && i < len(r.series.pools) {
		r.capacityChart(b, r.series.pools[i])
	}
	b.WriteString("<table><tr><th>share</th><th>strategy</th><th>limit</th><th>own used</th><th>avg own</th><th>avg borrowed</th><th>avg lent</th><th>borrowed GPU-h</th><th>lent GPU-h</th></tr>\n")
	for _, s := range p.Shares {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td></tr>\n",
			esc(orDash(s.Share)), esc(s.Strategy), s.Limit, pct(s.OwnUtilisation), s.AvgOwn, s.AvgBorrowed, s.AvgLent, s.BorrowedHours, s.LentHours)
	}
	b.WriteString("</table>\n")
}

// stackLayer is one band of a stacked chart: average instances per bucket.
type stackLayer struct {
	name   string
	values []float64
	light  bool
	color  int
}

// capacityChart draws a pool's use over time: each share's own capacity,
// then its borrowed capacity in a lighter shade, stacked, under the pool's
// capacity.
func (r *Report) capacityChart(b *strings.Builder, p *pool) {
	sd := r.series
	n := max(1, sd.n)
	layers := stackLayers(p, n, sd.width.Seconds())
	fmt.Fprintf(b, "<svg class=\"capacity\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", chartW, chartH, chartW, chartH)
	plotW, plotH := float64(chartW-padL-10), float64(chartH-padB-10)
	x := func(k int) float64 { return padL + plotW*float64(k)/float64(n) }
	y := func(v float64) float64 { return 10 + plotH*(1-v/float64(max(1, p.capacity))) }
	base := make([]float64, n)
	for _, l := range layers {
		var pts []string
		for k := 0; k < n; k++ {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(k), y(base[k]+l.values[k]), x(k+1), y(base[k]+l.values[k])))
		}
		for k := n - 1; k >= 0; k-- {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(k+1), y(base[k]), x(k), y(base[k])))
			base[k] += l.values[k]
		}
		fmt.Fprintf(b, "<polygon fill=\"%s\" points=\"%s\"><title>%s</title></polygon>\n", color(l.color, l.light), strings.Join(pts, " "), esc(l.name))
	}
	axes(b, x(0), y(0), x(n), y(float64(p.capacity)), fmt.Sprintf("%d", p.capacity), secs(sd.width.Seconds()*float64(n)))
	b.WriteString("</svg>\n<div class=\"legend\">")
	for _, l := range layers {
		fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s</span>", color(l.color, l.light), esc(l.name))
	}
	b.WriteString("</div>\n")
}

// stackLayers turns a pool's shares into bands, the busiest shares first
// and the rest merged as "others".
func stackLayers(p *pool, n int, width float64) []stackLayer {
	shares := slices.Clone(p.shares)
	slices.SortStableFunc(shares, func(a, b *poolShare) int {
		return cmp.Compare(b.area[kindOwn]+b.area[kindBorrowed], a.area[kindOwn]+a.area[kindBorrowed])
	})
	var out []stackLayer
	var others [2][]float64
	for i, s := range shares {
		for k, kind := range []int{kindOwn, kindBorrowed} {
			v := bucketAverages(s.series[kind], n, width)
			if i >= maxStacked {
				others[k] = addInto(others[k], v)
				continue
			}
			name := orDash(s.name) + [2]string{" own", " borrowed"}[k]
			out = append(out, stackLayer{name: name, values: v, light: k == 1, color: i})
		}
	}
	for k, v := range others {
		if v != nil {
			out = append(out, stackLayer{name: fmt.Sprintf("%d others%s", len(shares)-maxStacked, [2]string{" own", " borrowed"}[k]), values: v, light: k == 1, color: maxStacked})
		}
	}
	return out
}

func bucketAverages(s []float64, n int, width float64) []float64 {
	out := make([]float64, n)
	for k := 0; k < n && k < len(s); k++ {
		out[k] = s[k] / width
	}
	return out
}

func addInto(acc, v []float64) []float64 {
	if acc == nil {
		acc = make([]float64, len(v))
	}
	for k := range v {
		acc[k] += v[k]
	}
	return acc
}

// axes draws the frame with the top value on the left and the end time at
// the bottom right.
func axes(b *strings.Builder, x0, y0, x1, y1 float64, top, right string) {
	fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"#444\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n", x0, y1, x0, y0, x1, y0)
	fmt.Fprintf(b, "<line stroke=\"#999\" stroke-dasharray=\"4 3\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0, y1, x1, y1)
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", x0-4, y1+4, esc(top))
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">0</text>\n", x0-4, y0)
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", x1, y0+16, esc(right))
}

// htmlWaits draws the cumulative distribution of time to dispatch per
// class (or priority), and the table of percentiles.
func (r *Report) htmlWaits(b *strings.Builder) {
	b.WriteString("<h2>Time from submission to dispatch</h2>\n")
	if r.series != nil && len(r.series.waits) > 0 {
		waitChart(b, r.series.waits, r.Waits.All.Max)
	}
	b.WriteString("<table><tr><th>group</th><th>jobs</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n")
	row := func(name string, s WaitStats) {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			esc(name), s.Count, secs(s.Mean), secs(s.P50), secs(s.P95), secs(s.P99), secs(s.Max))
	}
	row("all", r.Waits.All)
	for _, g := range r.Waits.ByClass {
		row("class "+g.Group, g.WaitStats)
	}
	for _, g := range r.Waits.ByPriority {
		row("priority "+g.Group, g.WaitStats)
	}
	for _, g := range r.Waits.ByShare {
		row(g.Group, g.WaitStats)
	}
	b.WriteString("</table>\n")
}

func waitChart(b *strings.Builder, waits map[string][]float64, maxWait float64) {
	names := make([]string, 0, len(waits))
	for k := range waits {
		names = append(names, k)
	}
	slices.Sort(names)
	top := math.Max(maxWait, 1e-3)
	plotW, plotH := float64(chartW-padL-10), float64(chartH-padB-10)
	x := func(v float64) float64 { return padL + plotW*v/top }
	y := func(f float64) float64 { return 10 + plotH*(1-f) }
	fmt.Fprintf(b, "<svg class=\"waits\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", chartW, chartH, chartW, chartH)
	for i, name := range names {
		v := waits[name] // sorted by stats
		var pts []string
		step := max(1, len(v)/300)
		for k := 0; k < len(v); k += step {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(v[k]), y(float64(k+1)/float64(len(v)))))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(v[len(v)-1]), y(1)))
		fmt.Fprintf(b, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"%s\"><title>%s</title></polyline>\n", color(i, false), strings.Join(pts, " "), esc(name))
	}
	axes(b, x(0), y(0), x(top), y(1), "100%", secs(top))
	b.WriteString("</svg>\n<div class=\"legend\">")
	for i, name := range names {
		fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s</span>", color(i, false), esc(name))
	}
	b.WriteString("</div>\n")
}

func (r *Report) htmlPreemptions(b *strings.Builder) {
	b.WriteString("<h2>Preemptions</h2>\n<table><tr><th>share</th><th>cross-share</th><th>in-share</th><th>failed the job</th><th>lost GPU-h</th></tr>\n")
	for _, s := range r.Preemptions.ByShare {
		fmt.Fprintf(b, "<tr><td>%s/%s</td><td>%d</td><td>%d</td><td>%d</td><td>%.2f</td></tr>\n", esc(s.Queue), esc(orDash(s.Share)), s.CrossShare, s.InShare, s.RetriesExhausted, s.LostGPUHours)
	}
	b.WriteString("</table>\n")
}
