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
	for _, j := range r.NeverRanJobs {
		fmt.Fprintf(b, "  never ran: %s: %s\n", j.Job, j.Reason)
	}
	if more := r.Jobs.NeverRan - len(r.NeverRanJobs); more > 0 {
		fmt.Fprintf(b, "  and %d more that never ran\n", more)
	}
	fmt.Fprintf(b, "makespan %s, utilisation %s, average share usage %s\n\n", secs(r.Makespan), pct(r.Utilisation), pct(r.AverageShareUsage))
	r.writePools(b)
	r.writeWaits(b)
	r.writePreemptions(b)
	r.writeUsage(b)
	r.writeTimeline(b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) writePools(b *strings.Builder) {
	for _, p := range r.Pools {
		fmt.Fprintf(b, "%s on %s: %d × %s, utilisation %s, %s\n", p.Queue, p.Environment, p.Capacity, p.Unit, pct(p.Utilisation), p.hours())
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "share\tstrategy\tlimit\town used\tavg own\tavg borrowed\tavg lent\tborrowed inst-h\tlent inst-h\t")
		for _, s := range p.Shares {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", orDash(s.Share), s.Strategy, s.Limit,
				pct(s.OwnUtilisation), s.AvgOwn, s.AvgBorrowed, s.AvgLent, s.BorrowedHours, s.LentHours)
		}
		tw.Flush()
		b.WriteByte('\n')
	}
}

// p.hours is the pool's use in instance-hours, and in GPU-hours when its
// instances have GPUs.
func (p PoolReport) hours() string {
	if p.GPUsPerInstance == 0 {
		return fmt.Sprintf("%.2f instance-hours", p.InstanceHours)
	}
	return fmt.Sprintf("%.2f GPU-hours (%.2f instance-hours × %s)", p.GPUHours, p.InstanceHours, plural(p.GPUsPerInstance, "GPU"))
}

const (
	waitTitle     = "time waiting for dispatch, per job: the sum of its waits, from submission and from each requeue"
	eachWaitTitle = "each wait on its own"
)

func (r *Report) writeWaits(b *strings.Builder) {
	b.WriteString(waitTitle + "\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tjobs\tmean\tp50\tp95\tp99\tmax\t")
	r.Waits.rows(func(name string, s WaitStats) {
		c := s.cells()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, s.Count, c[0], c[1], c[2], c[3], c[4])
	})
	tw.Flush()
	b.WriteString("\n" + eachWaitTitle + "\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "wait\twaits\tmean\tp50\tp95\tp99\tmax\t")
	r.Waits.eachRows(func(name string, s WaitStats) {
		c := s.cells()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, s.Count, c[0], c[1], c[2], c[3], c[4])
	})
	tw.Flush()
	b.WriteByte('\n')
}

// cells are the mean and percentiles as text; dashes when there were no
// waits.
func (s WaitStats) cells() [5]string {
	if s.Count == 0 {
		return [5]string{"-", "-", "-", "-", "-"}
	}
	return [5]string{secs(s.Mean), secs(s.P50), secs(s.P95), secs(s.P99), secs(s.Max)}
}

// rows calls row for the per-job waits: all, by class, priority and share.
func (w WaitReport) rows(row func(string, WaitStats)) {
	row("all", w.All)
	for _, g := range w.ByClass {
		row("class "+g.Group, g.WaitStats)
	}
	for _, g := range w.ByPriority {
		row("priority "+g.Group, g.WaitStats)
	}
	for _, g := range w.ByShare {
		row(g.Group, g.WaitStats)
	}
}

// eachRows calls row for the waits on their own.
func (w WaitReport) eachRows(row func(string, WaitStats)) {
	row("from submission", w.First)
	row("from a requeue", w.Requeued)
}

func (r *Report) writePreemptions(b *strings.Builder) {
	p := r.Preemptions
	fmt.Fprintf(b, "preemptions: %d cross-share, %d in-share, %d failed the job; work lost: %s (checkpoint interval %s)\n",
		p.CrossShare, p.InShare, p.RetriesExhausted, r.lostText(), checkpointText(r.CheckpointInterval))
	if len(p.ByShare) == 0 {
		return
	}
	gpus := r.hasGPUs()
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "share\tunit\tcross-share\tin-share\tfailed\tlost inst-h\t")
	if gpus {
		fmt.Fprint(tw, "lost GPU-h\t")
	}
	fmt.Fprintln(tw)
	for _, s := range p.ByShare {
		fmt.Fprintf(tw, "%s/%s\t%s\t%d\t%d\t%d\t%.2f\t", s.Queue, orDash(s.Share), s.Unit, s.CrossShare, s.InShare, s.RetriesExhausted, s.LostInstanceHours)
		if gpus {
			fmt.Fprintf(tw, "%s\t", s.gpuHours())
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// gpuHours is the GPU-hours lost, or a dash for a unit without GPUs.
func (s SharePreempted) gpuHours() string {
	if s.GPUsPerInstance == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", s.LostGPUHours)
}

// lostText tells the work preemptions lost: in GPU-hours where the pools'
// instances have GPUs, in instance-hours where they have none.
func (r *Report) lostText() string {
	withGPUs, without := false, false
	for _, p := range r.Pools {
		withGPUs = withGPUs || p.GPUsPerInstance > 0
		without = without || p.GPUsPerInstance == 0
	}
	p := r.Preemptions
	switch {
	case !withGPUs:
		return fmt.Sprintf("%.2f instance-hours", p.LostInstanceHours)
	case !without:
		return fmt.Sprintf("%.2f GPU-hours", p.LostGPUHours)
	}
	other := 0.0
	for _, s := range p.ByShare {
		if s.GPUsPerInstance == 0 {
			other += s.LostInstanceHours
		}
	}
	return fmt.Sprintf("%.2f GPU-hours on instances with GPUs, %.2f instance-hours on instances without", p.LostGPUHours, other)
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

// plural is "1 GPU" or "4 GPUs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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

// writeUsage prints each share's use over the run by kind, as `sharq
// usage` does.
func (r *Report) writeUsage(b *strings.Builder) {
	if len(r.Usage) == 0 {
		return
	}
	gpus := r.hasGPUs()
	b.WriteString("\n")
	if gpus {
		b.WriteString("usage by share (instance-hours, GPU-hours; preempted: held by attempts later preempted):\n")
	} else {
		b.WriteString("usage by share (instance-hours; preempted: held by attempts later preempted):\n")
	}
	for _, u := range r.Usage {
		with := ""
		switch {
		case u.Kind == "borrowed" && u.Peer == "":
			with = " from spare capacity"
		case u.Kind == "borrowed":
			with = " from " + u.Peer
		case u.Kind == "lent":
			with = " to " + u.Peer
		}
		fmt.Fprintf(b, "  %s %s: %s%s %.2f", u.Queue, orDash(u.Share), u.Kind, with, u.InstanceHours)
		if gpus {
			fmt.Fprintf(b, ", %.2f", u.GPUHours)
		}
		b.WriteString("\n")
	}
}
