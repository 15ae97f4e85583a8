package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/batch/types"
)

// jobClass is one of the baseline's submission streams (per share).
type jobClass struct {
	Name      string
	Count     int
	Interval  time.Duration
	Instances int
	RuntimeMs int
	Priority  int
}

// kueueClasses are Kueue's baseline generator classes
// (test/performance/scheduler/configs/baseline/generator.yaml).
var kueueClasses = []jobClass{
	{"small", 350, 100 * time.Millisecond, 1, 200, 50},
	{"medium", 100, 500 * time.Millisecond, 5, 500, 100},
	{"large", 50, 1200 * time.Millisecond, 20, 1000, 200},
}

// workload is a baseline-shaped run: queues × shares × classes.
type workload struct {
	Queues, Shares int
	ShareCapacity  int // each share's maxCapacity; the environment holds Shares × this
	BorrowLimit    int
	InstanceType   string
	Classes        []jobClass
	Prefix         string // names of queues: <prefix>-q<i>
}

func kueueBaseline(prefix string) workload {
	return workload{Queues: 5, Shares: 6, ShareCapacity: 20, BorrowLimit: 500, InstanceType: "ml.m5.large", Classes: slices.Clone(kueueClasses), Prefix: prefix}
}

// plannedJob is one submission of the workload.
type plannedJob struct {
	At    time.Duration // from the start of the run
	Class int
	Spec  jobSpec
}

func (w workload) queueName(q int) string { return fmt.Sprintf("%s-q%d", w.Prefix, q) }
func (w workload) shareName(s int) string { return fmt.Sprintf("cq%d", s) }

func (w workload) queues() []queueConfig {
	var out []queueConfig
	for q := range w.Queues {
		qc := queueConfig{Name: w.queueName(q), InstanceType: w.InstanceType, Capacity: w.Shares * w.ShareCapacity}
		for s := range w.Shares {
			qc.Shares = append(qc.Shares, shareConfig{
				Name: w.shareName(s), Capacity: w.ShareCapacity,
				Strategy: types.QuotaShareResourceSharingStrategyLendAndBorrow, BorrowLimit: w.BorrowLimit, InShare: true,
			})
		}
		out = append(out, qc)
	}
	return out
}

// plan lists every submission in time order: job i of a class in a share
// goes at i × the class's interval, as Kueue's generator does.
func (w workload) plan() []plannedJob {
	var out []plannedJob
	for q := range w.Queues {
		for s := range w.Shares {
			for ci, c := range w.Classes {
				for i := range c.Count {
					out = append(out, plannedJob{At: time.Duration(i) * c.Interval, Class: ci, Spec: jobSpec{
						Name:  fmt.Sprintf("%s-q%d-%s-%s-%d", w.Prefix, q, w.shareName(s), c.Name, i),
						Queue: w.queueName(q), Share: w.shareName(s), Priority: c.Priority,
						InstanceType: w.InstanceType, Instances: c.Instances, RuntimeMs: c.RuntimeMs,
					}})
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At < out[b].At })
	return out
}

// physicalLimit is the shortest possible makespan: each queue's work over
// its capacity, but never before the last submission's job could end.
func (w workload) physicalLimit() time.Duration {
	work := 0.0 // instance-seconds per queue
	var last time.Duration
	for _, c := range w.Classes {
		work += float64(w.Shares*c.Count*c.Instances) * float64(c.RuntimeMs) / 1000
		if c.Count > 0 {
			last = max(last, time.Duration(c.Count-1)*c.Interval+time.Duration(c.RuntimeMs)*time.Millisecond)
		}
	}
	byWork := time.Duration(work / float64(w.Shares*w.ShareCapacity) * float64(time.Second))
	return max(byWork, last)
}

// submission is what the client saw of one submission.
type submission struct {
	id    string
	class int
	spec  jobSpec
	lag   time.Duration // sent this late against the plan
	err   error
}

// submitPlan submits each job at its offset from now, with up to conc
// requests in flight, and returns what happened to each.
func submitPlan(ctx context.Context, c *client, plan []plannedJob, conc int) ([]submission, time.Time) {
	out := make([]submission, len(plan))
	work := make(chan int, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p := plan[i]
				lag := time.Since(start) - p.At
				id, err := c.submit(ctx, p.Spec)
				out[i] = submission{id: id, class: p.Class, spec: p.Spec, lag: lag, err: err}
			}
		}()
	}
	for i, p := range plan {
		if d := time.Until(start.Add(p.At)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return out, start
}

// baselineResult is the run's figures, as kueue-baseline.md asks for.
type baselineResult struct {
	Jobs, Succeeded, Failed, Errors int
	Wall                            time.Duration // first creation to last end, server clock
	Limit                           time.Duration
	MaxLag                          time.Duration // worst submission lateness against the plan
	Classes                         []classWaits
	AvgShareUsage                   float64 // mean over shares of (instance-seconds used) / (limit × wall)
	Preemptions                     int
	ETA                             *etaResult // how close the start estimates came; nil when not watched
}

type classWaits struct {
	Name string
	summary
}

// analyse computes the figures from every job's final description. A
// job's wait is from createdAt to its first dispatch; a share's usage
// integrates its jobs' attempts (startedAt to stoppedAt) times their
// instances, over the share's limit × the wall time.
func analyse(w workload, subs []submission, views []jobView) baselineResult {
	r := baselineResult{Jobs: len(subs), Limit: w.physicalLimit()}
	waits := make([][]time.Duration, len(w.Classes))
	first, last := int64(0), int64(0)
	used := map[string]float64{} // queue/share → instance-ms
	for i, s := range subs {
		r.MaxLag = max(r.MaxLag, s.lag)
		if s.err != nil {
			r.Errors++
			continue
		}
		v := views[i]
		switch v.Status {
		case "SUCCEEDED":
			r.Succeeded++
		case "FAILED":
			r.Failed++
		}
		if first == 0 || v.CreatedAt < first {
			first = v.CreatedAt
		}
		last = max(last, v.StoppedAt)
		if d := v.firstDispatch(); d > 0 {
			waits[s.class] = append(waits[s.class], time.Duration(d-v.CreatedAt)*time.Millisecond)
		}
		r.Preemptions += v.preempted()
		for _, a := range v.Attempts {
			if a.StartedAt > 0 && a.StoppedAt >= a.StartedAt {
				used[s.spec.Queue+"/"+s.spec.Share] += float64(a.StoppedAt-a.StartedAt) * v.instances()
			}
		}
	}
	if last > first {
		r.Wall = time.Duration(last-first) * time.Millisecond
	}
	for ci, c := range w.Classes {
		r.Classes = append(r.Classes, classWaits{c.Name, summarize(waits[ci])})
	}
	if r.Wall > 0 {
		sum := 0.0
		for q := range w.Queues {
			for s := range w.Shares {
				sum += used[w.queueName(q)+"/"+w.shareName(s)] / (float64(w.ShareCapacity) * float64(r.Wall.Milliseconds()))
			}
		}
		r.AvgShareUsage = sum / float64(w.Queues*w.Shares)
	}
	return r
}

// runWorkload sets up the queues, submits the plan in real time, waits for
// every queue to drain and analyses the jobs. With etaPoll > 0 it reads the
// server's start estimates that often meanwhile, and compares them with
// the starts.
func runWorkload(ctx context.Context, c *client, w workload, conc int, etaPoll time.Duration, progress io.Writer) (baselineResult, error) {
	if err := createQueues(ctx, c, w.Prefix+"-policy", w.queues()); err != nil {
		return baselineResult{}, err
	}
	var watch *etaWatch
	if etaPoll > 0 {
		watch = newETAWatch(c, etaPoll)
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { watch.run(wctx); close(done) }()
		defer func() { stop(); <-done }()
	}
	plan := w.plan()
	subs, start := submitPlan(ctx, c, plan, conc)
	fmt.Fprintf(progress, "submitted %d jobs in %v; waiting for the queues to drain\n", len(subs), time.Since(start).Round(time.Millisecond))
	for q := 0; q < w.Queues; {
		idle, err := c.queueIdle(ctx, w.queueName(q))
		if err != nil {
			return baselineResult{}, err
		}
		if idle {
			q++
			continue
		}
		select {
		case <-ctx.Done():
			return baselineResult{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	fmt.Fprintf(progress, "drained %v after the first submission; describing every job\n", time.Since(start).Round(time.Millisecond))
	views := make([]jobView, len(subs))
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(subs) {
					return
				}
				if subs[i].err != nil {
					continue
				}
				v, err := c.describe(ctx, subs[i].id)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				views[i] = v
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return baselineResult{}, err
	}
	r := analyse(w, subs, views)
	if watch != nil {
		e := watch.compare(subs, views)
		r.ETA = &e
	}
	return r, nil
}

func (r baselineResult) print(out io.Writer) {
	fmt.Fprintf(out, "jobs %d: %d succeeded, %d failed, %d submissions failed; worst submission lateness %v\n",
		r.Jobs, r.Succeeded, r.Failed, r.Errors, r.MaxLag.Round(time.Millisecond))
	ratio := 0.0
	if r.Limit > 0 {
		ratio = r.Wall.Seconds() / r.Limit.Seconds()
	}
	fmt.Fprintf(out, "wall time %.2f s (first creation to last end); physical limit %.1f s; ratio %.3f\n", r.Wall.Seconds(), r.Limit.Seconds(), ratio)
	for _, c := range r.Classes {
		fmt.Fprintf(out, "time to SCHEDULED, %-6s: mean %s p50 %s p99 %s max %s (n=%d)\n",
			c.Name, fmtDur(c.Mean), fmtDur(c.P50), fmtDur(c.P99), fmtDur(c.Max), c.Count)
	}
	fmt.Fprintf(out, "average share usage %.1f%%; preemptions %d\n", 100*r.AvgShareUsage, r.Preemptions)
	if r.ETA != nil {
		r.ETA.print(out)
	}
}

func runBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var t targetFlags
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.register(fs)
	queues := fs.Int("queues", 5, "job queues (Kueue's cohorts), each with its own service environment")
	shares := fs.Int("shares", 6, "quota shares per queue (Kueue's ClusterQueues)")
	scale := fs.Float64("scale", 1, "fraction of each class's jobs to submit (keeps the intervals)")
	conc := fs.Int("concurrency", 64, "most submissions in flight")
	prefix := fs.String("prefix", "", "prefix of the queue names (default: kb<time>)")
	etaPoll := fs.Duration("eta-poll", 0, "read the server's start estimates this often during the run and report how close each job's first came to its start (0: not)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *prefix == "" {
		*prefix = fmt.Sprintf("kb%d", time.Now().Unix())
	}
	w := kueueBaseline(*prefix)
	w.Queues, w.Shares = *queues, *shares
	for i := range w.Classes {
		w.Classes[i].Count = max(1, int(float64(w.Classes[i].Count)**scale))
	}
	endpoint, proc, stop, err := t.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	c, err := newClient(endpoint, t.mode, *conc)
	if err != nil {
		return err
	}
	defer c.close()
	before := machine()
	cpu := startCPU(t.serverPid(proc))
	r, err := runWorkload(ctx, c, w, *conc, *etaPoll, stderr)
	if err != nil {
		return err
	}
	use := cpu.stop()
	fmt.Fprintf(stdout, "Kueue baseline: %d queues × %d shares, %d jobs, real time, simulated executor, %s\n",
		w.Queues, w.Shares, r.Jobs, map[string]string{modeSDK: "AWS SDK client", modeHTTP: "net/http client", modeWire: "wire client"}[t.mode])
	r.print(stdout)
	if use.ServerKnown {
		fmt.Fprintf(stdout, "server CPU %.1f s over %.1f s (%.2f CPUs)", use.Server.Seconds(), use.Wall.Seconds(), use.Server.Seconds()/use.Wall.Seconds())
		if rss, peak, err := procMemory(t.serverPid(proc)); err == nil {
			fmt.Fprintf(stdout, "; RSS %d MiB (peak %d MiB)", rss>>20, peak>>20)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "machine: %s before; %s after\n", before, loadNow())
	return nil
}
