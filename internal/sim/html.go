package sim

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes the report as one offline HTML page: tables, and charts
// as inline SVG: per pool, each share's own, borrowed and lent instances
// over time and a timeline of its jobs' dispatches and preemptions; the
// distribution of time waiting for dispatch. Colours are the console's
// (colours.go). It loads nothing from anywhere.
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

const css = `body{font:14px system-ui,sans-serif;margin:2em;color:` + inkColour + `;max-width:1100px}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid ` + lineColour + `}
th:first-child,td:first-child{text-align:left}h2{margin-top:2em}h3{margin:1.2em 0 .3em;font-size:15px}
svg{background:#fff;border:1px solid ` + lineColour + `;display:block}p.note{color:` + mutedColour + `;margin:.3em 0}
.legend{margin:.3em 0 1em;font-size:12px;color:` + mutedColour + `}.legend span{display:inline-block;margin-right:1.2em}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.legend i.dash{height:0;width:16px;border-top:2px dashed ` + inkColour + `}table:not(#summary) th{white-space:nowrap}`

func esc(s string) string { return html.EscapeString(s) }

func (r *Report) htmlSummary(b *strings.Builder) {
	j, w := r.Jobs, r.Waits
	b.WriteString("<table id=\"summary\">\n")
	rows := [][2]string{
		{"jobs", fmt.Sprintf("%d (%d succeeded, %d failed, %d cancelled, %d rejected, %d never ran)", j.Total, j.Succeeded, j.Failed, j.Cancelled, j.Rejected, j.NeverRan)},
		{"makespan", secs(r.Makespan)},
		{"utilisation", pct(r.Utilisation)},
		{"average share usage", pct(r.AverageShareUsage)},
		{"time waiting for dispatch per job, its waits summed: p50 / p95 / p99 / max", fmt.Sprintf("%s / %s / %s / %s", secs(w.All.P50), secs(w.All.P95), secs(w.All.P99), secs(w.All.Max))},
		{"waits from a requeue: p50 / max", fmt.Sprintf("%d waits: %s / %s", w.Requeued.Count, w.Requeued.cells()[1], w.Requeued.cells()[4])},
		{"preemptions", fmt.Sprintf("%d cross-share, %d in-share, %d failed the job", r.Preemptions.CrossShare, r.Preemptions.InShare, r.Preemptions.RetriesExhausted)},
		{"work lost to preemption", fmt.Sprintf("%s (checkpoint interval %s)", r.lostText(), checkpointText(r.CheckpointInterval))},
	}
	for _, row := range rows {
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(row[0]), esc(row[1]))
	}
	b.WriteString("</table>\n")
}

func (r *Report) htmlPool(b *strings.Builder, i int, p PoolReport) {
	fmt.Fprintf(b, "<section class=\"pool\" data-queue=\"%s\" data-unit=\"%s\">\n<h2>%s: %d × %s</h2>\n", esc(p.Queue), esc(p.Unit), esc(p.Queue), p.Capacity, esc(p.Unit))
	fmt.Fprintf(b, "<p class=\"note\">utilisation %s, %s</p>\n", pct(p.Utilisation), esc(p.hours()))
	if r.series != nil && i < len(r.series.pools) {
		b.WriteString("<h3>Instances in use</h3>\n")
		r.capacityChart(b, r.series.pools[i])
		b.WriteString("<h3>Dispatches and preemptions</h3>\n")
		r.timelineChart(b, r.series.pools[i])
	}
	b.WriteString("<table><tr><th>share</th><th>strategy</th><th>limit</th><th>own used</th><th>avg own</th><th>avg borrowed</th><th>avg lent</th><th>borrowed inst-h</th><th>lent inst-h</th></tr>\n")
	for _, s := range p.Shares {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td></tr>\n",
			esc(orDash(s.Share)), esc(s.Strategy), s.Limit, pct(s.OwnUtilisation), s.AvgOwn, s.AvgBorrowed, s.AvgLent, s.BorrowedHours, s.LentHours)
	}
	b.WriteString("</table>\n</section>\n")
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

// htmlWaits draws the cumulative distribution of the time jobs waited
// per class (or priority), and the tables of percentiles: per job, and
// per wait.
func (r *Report) htmlWaits(b *strings.Builder) {
	b.WriteString("<h2>Time waiting for dispatch</h2>\n<p class=\"note\">A job waits from its submission to its first dispatch, and again from each requeue (after a preemption) to its next dispatch. Per job, its waits are summed.</p>\n")
	if r.series != nil && len(r.series.waits) > 0 {
		waitChart(b, r.series.waits, r.Waits.All.Max)
	}
	b.WriteString("<table id=\"waits\"><tr><th>group</th><th>jobs</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n")
	row := func(name string, s WaitStats) {
		c := s.cells()
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(name), s.Count, c[0], c[1], c[2], c[3], c[4])
	}
	r.Waits.rows(row)
	b.WriteString("</table>\n<h3>Each wait on its own</h3>\n<table id=\"each-wait\"><tr><th>wait</th><th>waits</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n")
	r.Waits.eachRows(row)
	b.WriteString("</table>\n")
}

func (r *Report) htmlPreemptions(b *strings.Builder) {
	gpus := r.hasGPUs()
	b.WriteString("<h2>Preemptions</h2>\n<table id=\"preemptions\"><tr><th>share</th><th>unit</th><th>cross-share</th><th>in-share</th><th>failed the job</th><th>lost inst-h</th>")
	if gpus {
		b.WriteString("<th>lost GPU-h</th>")
	}
	b.WriteString("</tr>\n")
	for _, s := range r.Preemptions.ByShare {
		fmt.Fprintf(b, "<tr><td>%s/%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%.2f</td>", esc(s.Queue), esc(orDash(s.Share)), esc(s.Unit),
			s.CrossShare, s.InShare, s.RetriesExhausted, s.LostInstanceHours)
		if gpus {
			fmt.Fprintf(b, "<td>%s</td>", s.gpuHours())
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}
