package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chart geometry, in CSS pixels. A lane chart stacks one lane per share
// over a shared time axis.
const (
	chartW   = 900
	plotL    = 160 // lane names and tick labels sit left of it
	plotR    = 884
	plotTop  = 30 // the y axis title sits above it
	axisH    = 48 // tick labels and the x axis title sit under the plot
	laneH    = 48
	laneGap  = 20
	maxLanes = 12 // more shares than this: the busiest 11, and one lane for the rest
	nameMax  = 18 // longer share names are cut, in full on hover
)

// laneKind is one series a lane chart draws, with its legend entry.
type laneKind struct {
	key, label string
	colour     consoleColour
}

var (
	kindsCapacity = []laneKind{
		{"own", "own: used within the share's limit", colourOwn},
		{"borrowed", "borrowed: used beyond its limit", colourBorrowed},
		{"lent", "lent: its idle capacity in use by borrowers", colourLent},
	}
	kindsEvents = []laneKind{
		{"dispatched", "jobs dispatched (up)", colourDispatched},
		{"preempted", "jobs preempted and requeued (down)", colourPreempted},
		{"failed", "jobs failed by a preemption, retries exhausted (down)", colourFailed},
	}
)

// lane is one row of a lane chart: a share, the whole pool, or the shares
// beyond maxLanes together. Its series are per time bucket, in the order
// of the chart's kinds.
type lane struct {
	name   string
	limit  float64 // a dashed line; 0 for none
	series [3][]float64
}

// laneShares picks the shares a pool's lane charts show, in name order:
// all of them, or the busiest maxLanes-1; the others are returned apart.
func laneShares(p *pool) (shown, others []*poolShare) {
	if len(p.shares) <= maxLanes {
		return p.shares, nil
	}
	busy := slices.Clone(p.shares)
	slices.SortStableFunc(busy, func(a, b *poolShare) int {
		return cmp.Compare(b.area[kindOwn]+b.area[kindBorrowed], a.area[kindOwn]+a.area[kindBorrowed])
	})
	shown, others = busy[:maxLanes-1], busy[maxLanes-1:]
	slices.SortFunc(shown, func(a, b *poolShare) int { return strings.Compare(a.name, b.name) })
	return shown, others
}

// capacityLanes are the pool as a whole (when it has more than one share),
// then its shares: own, borrowed and lent instances, on average per bucket.
func capacityLanes(p *pool, n int, width float64) []lane {
	shown, others := laneShares(p)
	share := func(s *poolShare) [3][]float64 {
		var out [3][]float64
		for k := range out {
			out[k] = bucketAverages(s.series[k], n, width)
		}
		return out
	}
	var lanes []lane
	if len(p.shares) > 1 {
		all := lane{name: "all shares", limit: float64(p.capacity)}
		all.series[kindOwn], all.series[kindBorrowed] = make([]float64, n), make([]float64, n)
		for _, s := range p.shares {
			v := share(s)
			all.series[kindOwn] = addInto(all.series[kindOwn], v[kindOwn])
			all.series[kindBorrowed] = addInto(all.series[kindBorrowed], v[kindBorrowed])
		}
		lanes = append(lanes, all)
	}
	for _, s := range shown {
		lanes = append(lanes, lane{name: orDash(s.name), limit: float64(s.limit), series: share(s)})
	}
	if len(others) > 0 {
		rest := lane{name: fmt.Sprintf("%d others", len(others))}
		for _, s := range others {
			rest.limit += float64(s.limit)
			v := share(s)
			for k := range v {
				rest.series[k] = addInto(rest.series[k], v[k])
			}
		}
		lanes = append(lanes, rest)
	}
	return lanes
}

// eventLanes are the pool's shares: jobs dispatched, preempted and failed
// by a preemption, per bucket.
func eventLanes(p *pool, n int) []lane {
	shown, others := laneShares(p)
	var lanes []lane
	for _, s := range shown {
		l := lane{name: orDash(s.name)}
		for k := range l.series {
			l.series[k] = bucketSums(s.events[k], n)
		}
		lanes = append(lanes, l)
	}
	if len(others) > 0 {
		rest := lane{name: fmt.Sprintf("%d others", len(others))}
		for _, s := range others {
			for k := range rest.series {
				if v := bucketSums(s.events[k], n); v != nil {
					rest.series[k] = addInto(rest.series[k], v)
				}
			}
		}
		lanes = append(lanes, rest)
	}
	return lanes
}

// bucketSums are an event series' counts in n buckets; an event at the
// makespan's very end counts in the last. Nil when the series is.
func bucketSums(s []float64, n int) []float64 {
	if s == nil {
		return nil
	}
	out := make([]float64, n)
	for k, v := range s {
		out[min(k, n-1)] += v
	}
	return out
}

// chart is an SVG being written, with its plot's time scale.
type chart struct {
	b     *strings.Builder
	n     int     // buckets
	span  float64 // seconds the plot spans
	drawn map[string]bool
}

func (c *chart) x(k int) float64 { return plotL + (plotR-plotL)*float64(k)/float64(c.n) }

func laneTop(i int) float64 { return float64(plotTop + i*(laneH+laneGap)) }

func lanesHeight(n int) int { return plotTop + n*(laneH+laneGap) - laneGap + axisH }

// open starts the SVG; its title is what a screen reader says.
func (c *chart) open(class string, height int, title string) {
	fmt.Fprintf(c.b, "<svg class=%q width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" font-size=\"11\" fill=%q><title>%s</title>\n",
		class, chartW, height, chartW, height, inkColour, esc(title))
}

// capacityChart draws a pool's lanes of own, borrowed and lent instances
// over time, each under its share's limit (the pool's capacity for the
// whole pool), on a scale of its own.
func (r *Report) capacityChart(b *strings.Builder, p *pool) {
	sd := r.series
	c := &chart{b: b, n: max(1, sd.n), span: sd.width.Seconds() * float64(max(1, sd.n)), drawn: map[string]bool{}}
	lanes := capacityLanes(p, c.n, sd.width.Seconds())
	height := lanesHeight(len(lanes))
	c.open("capacity", height, "Instances in use over time, per share")
	c.yTitle("instances of " + p.unit + " in use, on average per " + secs(sd.width.Seconds()))
	c.grid(len(lanes))
	for i, l := range lanes {
		top := laneTop(i)
		peak := 0.0
		for k := 0; k < c.n; k++ {
			peak = max(peak, l.at(0, k)+l.at(1, k)+l.at(2, k))
		}
		scale := math.Max(1, math.Max(l.limit, math.Ceil(peak-1e-9)))
		y := func(v float64) float64 { return top + laneH*(1-v/scale) }
		c.laneStart(l.name, top)
		lo := make([]float64, c.n)
		for k, kind := range kindsCapacity {
			if isZero(l.series[k]) {
				continue
			}
			hi := addInto(slices.Clone(lo), l.series[k])
			c.area(kind, l.name, lo, hi, y)
			lo = hi
		}
		if l.limit > 0 {
			fmt.Fprintf(b, "<line class=\"limit\" stroke=%q stroke-dasharray=\"5 3\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"><title>%s</title></line>\n",
				inkColour, plotL, plotR, y(l.limit), y(l.limit), esc(fmt.Sprintf("%s: limit %g", l.name, l.limit)))
			c.drawn["limit"] = true
		}
		c.yTicks([]tick{{y(0), "0"}, {y(scale), tickLabel(scale)}})
		c.frame(top, top+laneH)
		b.WriteString("</g>\n")
	}
	c.xAxis(len(lanes), "time since the simulation's start")
	b.WriteString("</svg>\n")
	c.legend(kindsCapacity, legendEntry{"limit", "limit of the share (capacity of the pool)", ""})
}

// timelineChart draws a pool's lanes of dispatches (up) and preemptions
// (down) per time bucket, each lane on a scale of its own, as the lane of
// the shares beyond maxLanes holds many more.
func (r *Report) timelineChart(b *strings.Builder, p *pool) {
	sd := r.series
	c := &chart{b: b, n: max(1, sd.n), span: sd.width.Seconds() * float64(max(1, sd.n)), drawn: map[string]bool{}}
	lanes := eventLanes(p, c.n)
	height := lanesHeight(len(lanes))
	c.open("timeline", height, "Jobs dispatched and preempted over time, per share")
	c.yTitle("jobs per " + secs(sd.width.Seconds()) + ": dispatched up, preempted down")
	c.grid(len(lanes))
	for i, l := range lanes {
		top := laneTop(i)
		mid := top + laneH/2
		scale := 1.0
		for k := 0; k < c.n; k++ {
			scale = max(scale, l.at(0, k), l.at(1, k)+l.at(2, k))
		}
		up := func(v float64) float64 { return mid - laneH/2*v/scale }
		down := func(v float64) float64 { return mid + laneH/2*v/scale }
		c.laneStart(l.name, top)
		zero := make([]float64, c.n)
		if !isZero(l.series[eventDispatched]) {
			c.area(kindsEvents[eventDispatched], l.name, zero, l.series[eventDispatched], up)
		}
		lo := zero
		for _, k := range []int{eventPreempted, eventFailed} {
			if isZero(l.series[k]) {
				continue
			}
			hi := addInto(slices.Clone(lo), l.series[k])
			c.area(kindsEvents[k], l.name, lo, hi, down)
			lo = hi
		}
		fmt.Fprintf(b, "<line stroke=%q x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", mutedColour, plotL, plotR, mid, mid)
		c.yTicks([]tick{{up(scale), tickLabel(scale)}, {mid, "0"}, {down(scale), tickLabel(scale)}})
		c.frame(top, top+laneH)
		b.WriteString("</g>\n")
	}
	c.xAxis(len(lanes), "time since the simulation's start")
	b.WriteString("</svg>\n")
	c.legend(kindsEvents)
}

func (l lane) at(k, i int) float64 {
	if i >= len(l.series[k]) {
		return 0
	}
	return l.series[k][i]
}

func isZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// laneStart opens a lane's group and writes its name, cut to nameMax.
func (c *chart) laneStart(name string, top float64) {
	short := name
	if r := []rune(name); len(r) > nameMax {
		short = string(r[:nameMax-1]) + "…"
	}
	fmt.Fprintf(c.b, "<g class=\"lane\" data-share=\"%s\">\n<text class=\"lane-name\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">%s<title>%s</title></text>\n",
		esc(name), plotL-36, top+laneH/2+4, esc(short), esc(name))
}

// area fills the band between two step functions of the buckets, one
// step per run of buckets where neither changes.
func (c *chart) area(kind laneKind, laneName string, lo, hi []float64, y func(float64) float64) {
	var pts []string
	pt := func(x, v float64) { pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y(v))) }
	pt(c.x(0), hi[0])
	for k := 1; k < c.n; k++ {
		if hi[k] != hi[k-1] {
			pt(c.x(k), hi[k-1])
			pt(c.x(k), hi[k])
		}
	}
	pt(c.x(c.n), hi[c.n-1])
	pt(c.x(c.n), lo[c.n-1])
	for k := c.n - 1; k > 0; k-- {
		if lo[k] != lo[k-1] {
			pt(c.x(k), lo[k])
			pt(c.x(k), lo[k-1])
		}
	}
	pt(c.x(0), lo[0])
	fmt.Fprintf(c.b, "<polygon class=%q fill=%q points=\"%s\"><title>%s %s</title></polygon>\n",
		kind.key, kind.colour.hex, strings.Join(pts, " "), esc(laneName), kind.key)
	c.drawn[kind.key] = true
}

type tick struct {
	at    float64
	label string
}

func (c *chart) yTicks(ticks []tick) {
	for _, t := range ticks {
		fmt.Fprintf(c.b, "<line stroke=%q x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", mutedColour, plotL-4, plotL, t.at, t.at)
		fmt.Fprintf(c.b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=%q>%s</text>\n", plotL-6, t.at+4, mutedColour, esc(t.label))
	}
}

// frame draws a lane's y axis and its base.
func (c *chart) frame(top, bottom float64) {
	fmt.Fprintf(c.b, "<polyline fill=\"none\" stroke=%q points=\"%d,%.1f %d,%.1f %d,%.1f\"/>\n", mutedColour, plotL, top, plotL, bottom, plotR, bottom)
}

// yTitle names the lanes' unit, above them on the left.
func (c *chart) yTitle(text string) {
	fmt.Fprintf(c.b, "<text class=\"axis-title\" data-axis=\"y\" x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n", plotL, plotTop-12, esc(text))
}

// grid draws the time ticks' vertical rules behind the lanes.
func (c *chart) grid(lanes int) {
	bottom := laneTop(lanes) - laneGap
	ax := newTimeAxis(c.span)
	for _, t := range ax.ticks() {
		x := plotL + (plotR-plotL)*t/c.span
		fmt.Fprintf(c.b, "<line stroke=%q x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\"/>\n", lineColour, x, x, plotTop, bottom)
	}
}

// xAxis writes the time ticks under the last lane, and the axis title
// with its unit.
func (c *chart) xAxis(lanes int, title string) {
	c.xAxisAt(laneTop(lanes)-laneGap, newTimeAxis(c.span), title)
}

// xAxisAt writes the time ticks under y, and the axis title with its unit.
func (c *chart) xAxisAt(y float64, ax timeAxis, title string) {
	for _, t := range ax.ticks() {
		x := plotL + (plotR-plotL)*t/c.span
		fmt.Fprintf(c.b, "<line stroke=%q x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", mutedColour, x, x, y, y+4)
		fmt.Fprintf(c.b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=%q>%s</text>\n", x, y+16, mutedColour, ax.label(t))
	}
	fmt.Fprintf(c.b, "<text class=\"axis-title\" data-axis=\"x\" x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%s (%s)</text>\n",
		(plotL+plotR)/2, y+36, esc(title), ax.unit)
}

// legendEntry is one entry of a legend: a series key, its text, and its
// colour ("" for the dashed limit line).
type legendEntry struct{ key, label, colour string }

// legend lists the series the chart drew, and no others.
func (c *chart) legend(kinds []laneKind, extra ...legendEntry) {
	var entries []legendEntry
	for _, k := range kinds {
		entries = append(entries, legendEntry{k.key, k.label, k.colour.hex})
	}
	entries = append(entries, extra...)
	c.b.WriteString("<div class=\"legend\">")
	for _, e := range entries {
		if !c.drawn[e.key] {
			continue
		}
		swatch := fmt.Sprintf("<i style=\"background:%s\"></i>", e.colour)
		if e.colour == "" {
			swatch = "<i class=\"dash\"></i>"
		}
		fmt.Fprintf(c.b, "<span data-series=\"%s\">%s%s</span>", esc(e.key), swatch, esc(e.label))
	}
	c.b.WriteString("</div>\n")
}

// timeAxis is a time axis's unit and ticks for a span of seconds.
type timeAxis struct {
	unit       string
	per, step  float64 // seconds per unit; between ticks, in units
	spanInUnit float64
}

func newTimeAxis(span float64) timeAxis {
	ax := timeAxis{unit: "s", per: 1}
	switch {
	case span >= 3*86400:
		ax.unit, ax.per = "days", 86400
	case span >= 3*3600:
		ax.unit, ax.per = "hours", 3600
	case span >= 180:
		ax.unit, ax.per = "minutes", 60
	}
	ax.spanInUnit = span / ax.per
	ax.step = niceStep(ax.spanInUnit / 8)
	return ax
}

// ticks are the tick positions in seconds, from 0 to the span.
func (ax timeAxis) ticks() []float64 {
	var out []float64
	for k := 0; float64(k)*ax.step <= ax.spanInUnit*(1+1e-9); k++ {
		out = append(out, float64(k)*ax.step*ax.per)
	}
	return out
}

func (ax timeAxis) label(sec float64) string { return tickLabel(sec / ax.per) }

// niceStep is the smallest 1, 2 or 5 × 10^k not below x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= x*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel renders a tick value without float noise.
func tickLabel(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// waitChart draws, per class (or priority), the share of jobs whose waits
// summed to at most a time: a cumulative distribution.
func waitChart(b *strings.Builder, waits map[string][]float64, maxWait float64) {
	names := make([]string, 0, len(waits))
	for k := range waits {
		if len(waits[k]) > 0 {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	const plotH = 200
	top := math.Max(maxWait, 1) // a second at least, when no job waited
	c := &chart{b: b, span: top, drawn: map[string]bool{}}
	x := func(v float64) float64 { return plotL + (plotR-plotL)*v/top }
	y := func(f float64) float64 { return plotTop + plotH*(1-f) }
	c.open("waits", plotTop+plotH+laneGap+axisH, "Share of jobs dispatched within a time, per group")
	c.yTitle("jobs whose waits summed to at most the time (cumulative %)")
	ax := newTimeAxis(top)
	for _, t := range ax.ticks() {
		fmt.Fprintf(b, "<line stroke=%q x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n", lineColour, x(t), x(t), plotTop, plotTop+plotH)
	}
	var entries []legendEntry
	for i, name := range names {
		v := waits[name] // sorted by stats
		// A step up at each wait, at most about 300 of them.
		pts := []string{fmt.Sprintf("%.1f,%.1f", x(0), y(0))}
		step, below := max(1, len(v)/300), 0.0
		for k := 0; k < len(v); k += step {
			last := min(k+step, len(v)) - 1
			frac := float64(last+1) / float64(len(v))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(v[last]), y(below), x(v[last]), y(frac)))
			below = frac
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(top), y(1)))
		fmt.Fprintf(b, "<polyline fill=\"none\" stroke-width=\"2\" stroke=%q points=\"%s\"><title>%s</title></polyline>\n", groupColour(i), strings.Join(pts, " "), esc(name))
		c.drawn[name] = true
		entries = append(entries, legendEntry{name, name, groupColour(i)})
	}
	var ticks []tick
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ticks = append(ticks, tick{y(f), tickLabel(100*f) + "%"})
	}
	c.yTicks(ticks)
	c.frame(plotTop, plotTop+plotH)
	c.xAxisAt(plotTop+plotH, ax, "time waiting for dispatch, a job's waits summed")
	b.WriteString("</svg>\n")
	c.legend(nil, entries...)
}
