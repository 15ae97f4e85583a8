package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Comparison is one workload run on two configurations.
type Comparison struct {
	NameA string  `json:"a"`
	NameB string  `json:"b"`
	A     *Report `json:"reportA"`
	B     *Report `json:"reportB"`
}

// diffRow is one figure of both runs.
type diffRow struct {
	name   string
	a, b   float64
	unit   string // "s", "%", "h", "text" (sa, sb) or "" (a number)
	sa, sb string
}

func num(name string, a, b float64, unit string) diffRow {
	return diffRow{name: name, a: a, b: b, unit: unit}
}

// rows lists the figures worth comparing: the overall ones, then per share
// its use and its jobs' wait.
func (c *Comparison) rows() []diffRow {
	a, b := c.A, c.B
	rows := []diffRow{
		num("makespan", a.Makespan, b.Makespan, "s"),
		num("utilisation", a.Utilisation, b.Utilisation, "%"),
		num("average share usage", a.AverageShareUsage, b.AverageShareUsage, "%"),
		num("wait p50", a.Waits.All.P50, b.Waits.All.P50, "s"),
		num("wait p95", a.Waits.All.P95, b.Waits.All.P95, "s"),
		num("wait p99", a.Waits.All.P99, b.Waits.All.P99, "s"),
		num("wait max", a.Waits.All.Max, b.Waits.All.Max, "s"),
		num("cross-share preemptions", float64(a.Preemptions.CrossShare), float64(b.Preemptions.CrossShare), ""),
		num("in-share preemptions", float64(a.Preemptions.InShare), float64(b.Preemptions.InShare), ""),
		num("instance-hours lost to preemption", a.Preemptions.LostInstanceHours, b.Preemptions.LostInstanceHours, "h"),
	}
	if a.hasGPUs() || b.hasGPUs() {
		rows = append(rows, num("GPU-hours lost to preemption", a.Preemptions.LostGPUHours, b.Preemptions.LostGPUHours, "h"))
	}
	rows = append(rows, num("jobs that never ran", float64(a.Jobs.NeverRan), float64(b.Jobs.NeverRan), ""))
	bw := waitsByGroup(b.Waits.ByShare)
	for _, g := range a.Waits.ByShare {
		if o, ok := bw[g.Group]; ok {
			rows = append(rows, num(g.Group+" wait p50", g.P50, o.P50, "s"), num(g.Group+" wait p95", g.P95, o.P95, "s"),
				num(g.Group+" wait max", g.Max, o.Max, "s"))
		}
	}
	bs := sharesByName(b)
	for _, p := range a.Pools {
		for _, s := range p.Shares {
			o, ok := bs[p.Queue+"/"+s.Share+"/"+p.Unit]
			if !ok {
				continue
			}
			k := p.Queue + "/" + s.Share
			rows = append(rows, diffRow{name: k + " strategy", unit: "text", sa: s.Strategy, sb: o.Strategy},
				num(k+" own used", s.OwnUtilisation, o.OwnUtilisation, "%"),
				num(k+" avg borrowed", s.AvgBorrowed, o.AvgBorrowed, ""),
				num(k+" avg lent", s.AvgLent, o.AvgLent, ""))
		}
	}
	return rows
}

// hasGPUs tells whether any of the report's pools has GPUs.
func (r *Report) hasGPUs() bool {
	for _, p := range r.Pools {
		if p.GPUsPerInstance > 0 {
			return true
		}
	}
	return false
}

func waitsByGroup(gs []WaitGroup) map[string]WaitStats {
	m := map[string]WaitStats{}
	for _, g := range gs {
		m[g.Group] = g.WaitStats
	}
	return m
}

func sharesByName(r *Report) map[string]ShareReport {
	m := map[string]ShareReport{}
	for _, p := range r.Pools {
		for _, s := range p.Shares {
			m[p.Queue+"/"+s.Share+"/"+p.Unit] = s
		}
	}
	return m
}

func (d diffRow) format(v float64) string {
	switch d.unit {
	case "s":
		return secs(v)
	case "%":
		return pct(v)
	case "h":
		return fmt.Sprintf("%.2f", v)
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// cells renders the row's two values.
func (d diffRow) cells() (string, string) {
	if d.unit == "text" {
		return d.sa, d.sb
	}
	return d.format(d.a), d.format(d.b)
}

func (d diffRow) differs() bool {
	a, b := d.cells()
	return a != b
}

// WriteText writes the figures side by side, marking those that differ.
func (c *Comparison) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "workload %s: A = %s, B = %s\n\n", c.A.Workload, c.NameA, c.NameB)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tA\tB\t")
	for _, d := range c.rows() {
		mark := ""
		if d.differs() {
			mark = "  *"
		}
		a, b := d.cells()
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t\n", d.name, a, b, mark)
	}
	tw.Flush()
	b.WriteString("\n* differs\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes both reports.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteHTML writes the side-by-side table, then each run's report.
func (c *Comparison) WriteHTML(w io.Writer) error {
	b := &strings.Builder{}
	title := "sharq sim: " + c.A.Workload + ": " + c.NameA + " vs " + c.NameB
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s</style></head><body>\n<h1>%s</h1>\n", esc(title), css, esc(title))
	fmt.Fprintf(b, "<table id=\"compare\"><tr><th>figure</th><th>A: %s</th><th>B: %s</th></tr>\n", esc(c.NameA), esc(c.NameB))
	for _, d := range c.rows() {
		style := ""
		if d.differs() {
			style = " style=\"font-weight:bold\""
		}
		ca, cb := d.cells()
		fmt.Fprintf(b, "<tr%s><td>%s</td><td>%s</td><td>%s</td></tr>\n", style, esc(d.name), esc(ca), esc(cb))
	}
	b.WriteString("</table>\n")
	for _, part := range []struct {
		name string
		r    *Report
	}{{"A: " + c.NameA, c.A}, {"B: " + c.NameB, c.B}} {
		fmt.Fprintf(b, "<h1>%s</h1>\n", esc(part.name))
		part.r.htmlBody(b)
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
