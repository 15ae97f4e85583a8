package sim

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sharq-dev/sharq/internal/core"
)

// Report is what a simulation found. Times are in seconds; capacity in
// instances of a pool's capacity unit (an instance type). Use is counted in
// instance-hours, and also in GPU-hours (instance-hours × the type's GPUs,
// trainingjob.GPUs) for the instance types that have GPUs only.
type Report struct {
	Workload           string  `json:"workload"`
	CheckpointInterval float64 `json:"checkpointIntervalSeconds"`
	Jobs               Counts  `json:"jobs"`
	// NeverRanJobs are the first of the jobs that never ran, in workload
	// order (at most MaxNeverRanShown), with why they wait.
	NeverRanJobs []WaitingJob `json:"neverRanJobs,omitempty"`
	// Makespan runs from the first submission to the last job's end.
	Makespan float64 `json:"makespanSeconds"`
	// Utilisation is the capacity in use over the makespan, all pools
	// together; AverageShareUsage the mean over shares of use / limit (the
	// figure Kueue reports as ClusterQueue usage).
	Utilisation       float64      `json:"utilisation"`
	AverageShareUsage float64      `json:"averageShareUsage"`
	Pools             []PoolReport `json:"pools"`
	Waits             WaitReport   `json:"timeToDispatch"`
	Preemptions       Preemptions  `json:"preemptions"`
	// Series is each share's own, borrowed and lent capacity over time.
	Series   []PoolSeries    `json:"timeSeries"`
	Timeline []TimelineEntry `json:"timeline,omitempty"`
	// Usage is each share's use over the run as the server's usage history
	// counts it (package usage), by kind and peer.
	Usage []UsageRow `json:"usage,omitempty"`

	series *seriesData
}

// Counts are the jobs by outcome.
type Counts struct {
	Total     int `json:"total"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Rejected  int `json:"rejected"`
	// NeverRan are jobs still RUNNABLE at the end: they could never be
	// placed with this configuration.
	NeverRan int `json:"neverRan"`
}

// MaxNeverRanShown is how many of the jobs that never ran a report names.
const MaxNeverRanShown = 10

// WaitingJob is a job still RUNNABLE at the end and why it waits.
type WaitingJob struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// PoolReport is one capacity unit of one queue's service environment.
type PoolReport struct {
	Queue       string `json:"queue"`
	Environment string `json:"serviceEnvironment"`
	Unit        string `json:"capacityUnit"`
	Capacity    int    `json:"capacity"`
	// GPUsPerInstance is the GPUs of one instance of the unit; 0 for a
	// type without GPUs, whose use is told in instance-hours only.
	GPUsPerInstance int     `json:"gpusPerInstance"`
	Utilisation     float64 `json:"utilisation"`
	InstanceHours   float64 `json:"instanceHours"`
	// GPUHours is InstanceHours × GPUsPerInstance; absent without GPUs.
	GPUHours float64       `json:"gpuHours,omitempty"`
	Shares   []ShareReport `json:"shares"`
}

// ShareReport is one share's use of one pool. Averages are over the
// makespan, in instances; hours are instance-hours.
type ShareReport struct {
	Share    string `json:"share"`
	Strategy string `json:"strategy"`
	Limit    int    `json:"limit"`
	// OwnUtilisation is the share's own capacity in use by its jobs.
	OwnUtilisation float64 `json:"ownUtilisation"`
	AvgOwn         float64 `json:"averageOwn"`
	AvgBorrowed    float64 `json:"averageBorrowed"`
	AvgLent        float64 `json:"averageLent"`
	OwnHours       float64 `json:"ownInstanceHours"`
	BorrowedHours  float64 `json:"borrowedInstanceHours"`
	LentHours      float64 `json:"lentInstanceHours"`
	// Usage is (own + borrowed) / limit on average.
	Usage float64 `json:"usage"`
}

// WaitReport is how long jobs waited to be dispatched. A job waits from
// its submission to its first dispatch, and again from each requeue (after
// a preemption, or a failed attempt that is retried) to its next dispatch.
// All and the groups count each job dispatched at least once, with the sum
// of its waits; First and Requeued count each wait on its own. A wait that
// no dispatch ends (the job was cancelled, or could not be placed) is in
// none of them.
type WaitReport struct {
	All        WaitStats   `json:"all"`
	ByShare    []WaitGroup `json:"byShare"`
	ByPriority []WaitGroup `json:"byPriority"`
	ByClass    []WaitGroup `json:"byClass,omitempty"`
	// First are the waits from submission to first dispatch.
	First WaitStats `json:"firstWaits"`
	// Requeued are the waits from a requeue to the next dispatch.
	Requeued WaitStats `json:"requeuedWaits"`
}

// WaitGroup is the wait of one group of jobs.
type WaitGroup struct {
	Group string `json:"group"`
	WaitStats
}

// WaitStats summarise waits in seconds.
type WaitStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Preemptions count preempted attempts by kind, and the work they lost:
// in instance-hours over all pools, and in GPU-hours over the pools whose
// instances have GPUs.
type Preemptions struct {
	CrossShare int `json:"crossShare"`
	InShare    int `json:"inShare"`
	// RetriesExhausted are preemptions that failed the job.
	RetriesExhausted  int              `json:"retriesExhausted"`
	LostInstanceHours float64          `json:"lostInstanceHours"`
	LostGPUHours      float64          `json:"lostGpuHours,omitempty"`
	ByShare           []SharePreempted `json:"byShare"`
}

// SharePreempted is the preemptions suffered by one share's jobs on one
// capacity unit.
type SharePreempted struct {
	Queue             string  `json:"queue"`
	Share             string  `json:"share"`
	Unit              string  `json:"capacityUnit"`
	GPUsPerInstance   int     `json:"gpusPerInstance"`
	CrossShare        int     `json:"crossShare"`
	InShare           int     `json:"inShare"`
	RetriesExhausted  int     `json:"retriesExhausted"`
	LostInstanceHours float64 `json:"lostInstanceHours"`
	LostGPUHours      float64 `json:"lostGpuHours,omitempty"`
}

// PoolSeries is a pool's use over time in buckets of equal width, from
// the start of the simulation to the end of the makespan.
type PoolSeries struct {
	Queue         string        `json:"queue"`
	Unit          string        `json:"capacityUnit"`
	BucketSeconds float64       `json:"bucketSeconds"`
	Shares        []ShareSeries `json:"shares"`
}

// ShareSeries are a share's average instances per bucket, and how many of
// its jobs were dispatched, preempted and requeued, and failed by a
// preemption (their retries exhausted) in each bucket; a count series is
// absent when nothing of its kind happened.
type ShareSeries struct {
	Share       string    `json:"share"`
	Own         []float64 `json:"own"`
	Borrowed    []float64 `json:"borrowed"`
	Lent        []float64 `json:"lent"`
	Dispatches  []int     `json:"dispatches,omitempty"`
	Preemptions []int     `json:"preemptions,omitempty"`
	Failures    []int     `json:"preemptionFailures,omitempty"`
}

// TimelineEntry is one dispatch, preemption or end.
type TimelineEntry struct {
	At     float64 `json:"at"`
	Job    string  `json:"job"`
	Share  string  `json:"share"`
	Event  string  `json:"event"`
	Detail string  `json:"detail,omitempty"`
}

// seriesData is what the HTML charts draw.
type seriesData struct {
	width time.Duration
	n     int // buckets up to the makespan
	pools []*pool
	waits map[string][]float64 // seconds, sorted, by class or priority
}

// waitSets gather waits by share, priority and class.
type waitSets struct {
	all   []float64
	share map[string][]float64
	prio  map[int][]float64
	class map[string][]float64
}

func newWaitSets(n int) waitSets {
	return waitSets{all: make([]float64, 0, n), share: map[string][]float64{}, prio: map[int][]float64{}, class: map[string][]float64{}}
}

// perJob gathers each dispatched job's total wait.
func (c *collector) perJob() waitSets {
	w := newWaitSets(len(c.jobs))
	for i := range c.jobs {
		if st := &c.jobs[i]; st.dispatched {
			w.add(&c.s.w.Jobs[i], st.waited)
		}
	}
	return w
}

func (w *waitSets) add(j *Job, d time.Duration) {
	s := d.Seconds()
	w.all = append(w.all, s)
	k := j.Queue + "/" + j.Share
	w.share[k] = append(w.share[k], s)
	w.prio[j.Priority] = append(w.prio[j.Priority], s)
	if j.Class != "" {
		w.class[j.Class] = append(w.class[j.Class], s)
	}
}

// stats sorts v and summarises it; percentiles are nearest-rank.
func stats(v []float64) WaitStats {
	if len(v) == 0 {
		return WaitStats{}
	}
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	rank := func(p float64) float64 { return v[max(0, int(math.Ceil(p*float64(len(v))))-1)] }
	return WaitStats{Count: len(v), Mean: round(sum / float64(len(v))), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: v[len(v)-1]}
}

// round keeps six significant decimals, so float noise stays out of the
// report.
func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func groups[K cmp.Ordered](m map[K][]float64, name func(K) string) []WaitGroup {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]WaitGroup, 0, len(keys))
	for _, k := range keys {
		out = append(out, WaitGroup{Group: name(k), WaitStats: stats(m[k])})
	}
	return out
}

// report closes the integrals at the last job's end and summarises.
func (c *collector) report() *Report {
	end := max(c.last, c.first)
	for _, p := range c.pools {
		p.flush(end, c.ts)
	}
	span := (end - c.first).Seconds()
	r := &Report{Workload: c.s.w.Name, CheckpointInterval: c.s.opts.CheckpointInterval.Seconds(), Makespan: round(span), Timeline: c.line}
	r.Jobs = Counts{Total: len(c.jobs), Succeeded: c.counts["succeeded"], Failed: c.counts["failed"], Cancelled: c.counts["cancelled"], Rejected: c.counts["rejected"]}
	for i, st := range c.jobs {
		if st.phase != phaseWaiting {
			continue
		}
		r.Jobs.NeverRan++
		if len(r.NeverRanJobs) < MaxNeverRanShown {
			id := c.s.w.Jobs[i].ID
			why := "waiting"
			if p, ok := c.s.eng.JobPosition(id); ok && p.Reason.Code != core.ReasonNone {
				why = p.Reason.String()
			}
			r.NeverRanJobs = append(r.NeverRanJobs, WaitingJob{Job: id, Reason: why})
		}
	}
	c.poolReports(r, span)
	r.Usage = c.usageReport(Epoch.Add(end).UnixMilli())
	waits := c.perJob()
	r.Waits = WaitReport{
		ByShare:    groups(waits.share, func(k string) string { return k }),
		ByPriority: groups(waits.prio, strconv.Itoa),
		ByClass:    groups(waits.class, func(k string) string { return k }),
		First:      stats(c.firstWaits),
		Requeued:   stats(c.requeuedWaits),
	}
	r.Waits.All = stats(waits.all)
	r.series = &seriesData{width: c.ts.width, pools: c.pools, waits: map[string][]float64{}}
	r.series.n = int(min(int64(c.ts.n), int64((end+c.ts.width-1)/c.ts.width)))
	r.Series = seriesReport(c.pools, r.series.n, c.ts.width.Seconds())
	if len(waits.class) > 0 {
		r.series.waits = waits.class
	} else {
		for p, v := range waits.prio {
			r.series.waits["priority "+strconv.Itoa(p)] = v
		}
	}
	return r
}

func (c *collector) poolReports(r *Report, span float64) {
	usedAll, capAll, usageSum, usageN := 0.0, 0.0, 0.0, 0
	for _, p := range c.pools {
		pr := PoolReport{Queue: p.queue, Environment: p.env, Unit: p.unit, Capacity: p.capacity, GPUsPerInstance: p.gpus,
			InstanceHours: round(p.used / 3600), GPUHours: round(p.used * float64(p.gpus) / 3600)}
		pr.Utilisation = ratio(p.used, float64(p.capacity)*span)
		usedAll += p.used
		capAll += float64(p.capacity) * span
		for _, s := range p.shares {
			sr := shareReport(s, span)
			if s.limit > 0 {
				usageSum += sr.Usage
				usageN++
			}
			pr.Shares = append(pr.Shares, sr)
			r.addPreemptions(p, s)
		}
		r.Pools = append(r.Pools, pr)
	}
	r.Utilisation = ratio(usedAll, capAll)
	r.AverageShareUsage = ratio(usageSum, float64(usageN))
	r.Preemptions.LostInstanceHours = round(r.Preemptions.LostInstanceHours)
	r.Preemptions.LostGPUHours = round(r.Preemptions.LostGPUHours)
}

func shareReport(s *poolShare, span float64) ShareReport {
	own, borrowed, lent := s.area[kindOwn], s.area[kindBorrowed], s.area[kindLent]
	return ShareReport{
		Share: s.name, Strategy: s.strategy, Limit: s.limit,
		OwnUtilisation: ratio(own, float64(s.limit)*span),
		AvgOwn:         ratio(own, span), AvgBorrowed: ratio(borrowed, span), AvgLent: ratio(lent, span),
		OwnHours: round(own / 3600), BorrowedHours: round(borrowed / 3600), LentHours: round(lent / 3600),
		Usage: ratio(own+borrowed, float64(s.limit)*span),
	}
}

func (r *Report) addPreemptions(pl *pool, s *poolShare) {
	if s.crossShare+s.inShare+s.exhausted == 0 {
		return
	}
	p := &r.Preemptions
	p.CrossShare += s.crossShare
	p.InShare += s.inShare
	p.RetriesExhausted += s.exhausted
	p.LostInstanceHours += s.lost / 3600
	p.LostGPUHours += s.lost * float64(pl.gpus) / 3600
	p.ByShare = append(p.ByShare, SharePreempted{Queue: pl.queue, Share: s.name, Unit: pl.unit, GPUsPerInstance: pl.gpus,
		CrossShare: s.crossShare, InShare: s.inShare, RetriesExhausted: s.exhausted,
		LostInstanceHours: round(s.lost / 3600), LostGPUHours: round(s.lost * float64(pl.gpus) / 3600)})
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round(a / b)
}

func seriesReport(pools []*pool, n int, width float64) []PoolSeries {
	out := make([]PoolSeries, 0, len(pools))
	for _, p := range pools {
		ps := PoolSeries{Queue: p.queue, Unit: p.unit, BucketSeconds: round(width)}
		for _, s := range p.shares {
			ss := ShareSeries{Share: s.name}
			for k, dst := range []*[]float64{&ss.Own, &ss.Borrowed, &ss.Lent} {
				*dst = bucketAverages(s.series[k], n, width)
				for i, v := range *dst {
					(*dst)[i] = math.Round(v*1000) / 1000
				}
			}
			for k, dst := range []*[]int{&ss.Dispatches, &ss.Preemptions, &ss.Failures} {
				*dst = bucketCounts(s.events[k], n)
			}
			ps.Shares = append(ps.Shares, ss)
		}
		out = append(out, ps)
	}
	return out
}

// bucketCounts are the counts of an event series in n buckets; nil when it
// has none.
func bucketCounts(s []float64, n int) []int {
	if s == nil {
		return nil
	}
	out := make([]int, n)
	for k, v := range s {
		// An event at the makespan's very end counts in the last bucket.
		out[min(k, n-1)] += int(v)
	}
	return out
}
