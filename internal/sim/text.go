package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report as a plain-text summary.
func (r *Report) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "workload %s: %d jobs, %d succeeded, %d failed, %d cancelled, %d rejected, %d never ran\n",
		r.Workload, r.Jobs.Total, r.Jobs.Succeeded, r.Jobs.Failed, r.Jobs.Cancelled, r.Jobs.Rejected, r.Jobs.NeverRan)
	fmt.Fprintf(b, "makespan %s, utilisation %s, average share usage %s\n\n", secs(r.Makespan), pct(r.Utilisation), pct(r.AverageShareUsage))
	r.writePools(b)
	r.writeWaits(b)
	r.writePreemptions(b)
	r.writeTimeline(b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) writePools(b *strings.Builder) {
	for _, p := range r.Pools {
		fmt.Fprintf(b, "%s on %s: %d × %s, utilisation %s, %.2f GPU-hours\n", p.Queue, p.Environment, p.Capacity, p.Unit, pct(p.Utilisation), p.GPUHours)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "share\tstrategy\tlimit\town used\tavg own\tavg borrowed\tavg lent\tborrowed h\tlent h\t")
		for _, s := range p.Shares {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", orDash(s.Share), s.Strategy, s.Limit,
				pct(s.OwnUtilisation), s.AvgOwn, s.AvgBorrowed, s.AvgLent, s.BorrowedHours, s.LentHours)
		}
		tw.Flush()
		b.WriteByte('\n')
	}
}

func (r *Report) writeWaits(b *strings.Builder) {
	b.WriteString("time from submission to dispatch\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tjobs\tmean\tp50\tp95\tp99\tmax\t")
	row := func(name string, s WaitStats) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, s.Count, secs(s.Mean), secs(s.P50), secs(s.P95), secs(s.P99), secs(s.Max))
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
	tw.Flush()
	b.WriteByte('\n')
}

func (r *Report) writePreemptions(b *strings.Builder) {
	p := r.Preemptions
	fmt.Fprintf(b, "preemptions: %d cross-share, %d in-share, %d failed the job; %.2f GPU-hours lost (checkpoint interval %s)\n",
		p.CrossShare, p.InShare, p.RetriesExhausted, p.LostGPUHours, checkpointText(r.CheckpointInterval))
	if len(p.ByShare) == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "share\tcross-share\tin-share\tfailed\tlost GPU-h\t")
	for _, s := range p.ByShare {
		fmt.Fprintf(tw, "%s/%s\t%d\t%d\t%d\t%.2f\t\n", s.Queue, orDash(s.Share), s.CrossShare, s.InShare, s.RetriesExhausted, s.LostGPUHours)
	}
	tw.Flush()
}

func (r *Report) writeTimeline(b *strings.Builder) {
	if len(r.Timeline) == 0 {
		return
	}
	b.WriteString("\ntimeline\n")
	for _, e := range r.Timeline {
		fmt.Fprintf(b, "%s\n", e)
	}
}

func (e TimelineEntry) String() string {
	s := fmt.Sprintf("%10s  %-10s %s %s", secs(e.At), e.Event, e.Job, e.Share)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func checkpointText(s float64) string {
	if s == 0 {
		return "none: a preempted job restarts"
	}
	return secs(s)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// secs renders seconds with a unit that suits their size.
func secs(s float64) string {
	switch {
	case s >= 86400:
		return fmt.Sprintf("%.1fd", s/86400)
	case s >= 3600:
		return fmt.Sprintf("%.1fh", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.1fm", s/60)
	}
	return fmt.Sprintf("%.3gs", s)
}
