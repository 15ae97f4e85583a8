package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// loadFlags are the flags of the throughput commands.
type loadFlags struct {
	targetFlags
	clients   int
	warmup    time.Duration
	duration  time.Duration
	queue     string
	capacity  int
	shares    int
	runtimeMs int
}

func (l *loadFlags) register(fs *flag.FlagSet, clients int) {
	l.targetFlags.register(fs)
	fs.IntVar(&l.clients, "clients", clients, "concurrent clients, each with one request in flight")
	fs.DurationVar(&l.warmup, "warmup", 2*time.Second, "time before the measured window")
	fs.DurationVar(&l.duration, "duration", 10*time.Second, "length of the measured window")
	fs.StringVar(&l.queue, "queue", "", "name of the job queue to create (default: load-<time>)")
	fs.IntVar(&l.capacity, "capacity", 8, "the queue's capacity in instances; jobs beyond it wait RUNNABLE")
	fs.IntVar(&l.shares, "shares", 4, "quota shares in the queue; jobs go to them in turn")
	fs.IntVar(&l.runtimeMs, "runtime-ms", 0, "each job's simulated runtime (0: it runs until stopped)")
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	return nil
}

// setup starts or finds the server and creates the load queue.
func (l *loadFlags) setup(ctx context.Context, stderr io.Writer) (*client, *process, func(), error) {
	endpoint, proc, stop, err := l.open(ctx, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := newClient(endpoint, l.mode, l.clients)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	if l.queue == "" {
		l.queue = fmt.Sprintf("load-%d", time.Now().UnixNano())
	}
	if err := createQueues(ctx, c, l.queue+"-policy", []queueConfig{evenQueue(l.queue, "ml.m5.large", l.capacity, l.shares)}); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return c, proc, func() { c.close(); stop() }, nil
}

func (l *loadFlags) job(n int) jobSpec {
	return jobSpec{
		Name: fmt.Sprintf("load-%d", n), Queue: l.queue, Share: fmt.Sprintf("s%d", n%l.shares),
		Priority: 10, InstanceType: "ml.m5.large", Instances: 1, RuntimeMs: l.runtimeMs,
	}
}

func (l *loadFlags) client() string {
	switch l.mode {
	case modeSDK:
		return "AWS SDK client"
	case modeHTTP:
		return "net/http client"
	}
	return "wire client"
}

// reportLoad prints a throughput result with the machine's load.
func reportLoad(w io.Writer, what string, l *loadFlags, before machineInfo, r hammerResult, proc *process) {
	fmt.Fprintf(w, "%s: %.0f/s (%s, %d clients, %v window): %d answered, %d errors\n",
		what, r.Rate(), l.client(), l.clients, l.duration, r.OK, r.Errors)
	fmt.Fprintf(w, "  latency %s\n", summarize(r.Latencies))
	if r.FirstErr != nil {
		fmt.Fprintf(w, "  first error: %v\n", r.FirstErr)
	}
	if r.CPU.Wall > 0 { // not measured for this kind of request alone
		fmt.Fprintf(w, "  %s\n", r.CPU.perRequest(r.OK, before.CPUs))
	}
	if r.Cycles.Count > 0 && what == "SubmitServiceJob" {
		fmt.Fprintf(w, "  engine: %s\n", r.Cycles.describe(r.OK))
	}
	if s := r.Cycles.reads(); s != "" && what == "DescribeServiceJob" {
		fmt.Fprintf(w, "  engine: %s\n", s)
	}
	if proc != nil {
		if rss, peak, err := proc.memory(); err == nil {
			fmt.Fprintf(w, "  server RSS %d MiB (peak %d MiB)\n", rss>>20, peak>>20)
		}
	}
	fmt.Fprintf(w, "  machine: %s before; %s after\n", before, loadNow())
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var l loadFlags
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l.register(fs, 64)
	if err := parse(fs, args); err != nil {
		return err
	}
	c, proc, stop, err := l.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	before := machine()
	var seq atomic.Int64
	r := hammer(ctx, l.clients, l.warmup, l.duration, l.serverPid(proc), c.endpoint, func(ctx context.Context, _, _ int) error {
		_, err := c.submit(ctx, l.job(int(seq.Add(1))))
		return err
	})
	reportLoad(stdout, "SubmitServiceJob", &l, before, r, proc)
	return nil
}

func runDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var l loadFlags
	fs := flag.NewFlagSet("describe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l.register(fs, 32)
	jobs := fs.Int("jobs", 10000, "jobs to submit first; each request describes one of them at random")
	submitters := fs.Int("submitters", 0, "clients that submit new jobs during the describes, each with one request in flight: describes under writes")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, proc, stop, err := l.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	ids, err := submitMany(ctx, c, *jobs, 32, l.job)
	if err != nil {
		return err
	}
	var writes chan hammerResult
	if *submitters > 0 {
		sc, err := newClient(c.endpoint, l.mode, *submitters)
		if err != nil {
			return err
		}
		defer sc.close()
		writes = make(chan hammerResult, 1)
		var seq atomic.Int64
		seq.Store(int64(*jobs))
		go func() {
			writes <- hammer(ctx, *submitters, l.warmup, l.duration, 0, c.endpoint, func(ctx context.Context, _, _ int) error {
				_, err := sc.submit(ctx, l.job(int(seq.Add(1))))
				return err
			})
		}()
	}
	before := machine()
	r := hammer(ctx, l.clients, l.warmup, l.duration, l.serverPid(proc), c.endpoint, func(ctx context.Context, client, n int) error {
		return c.describeCheck(ctx, ids[rand.IntN(len(ids))])
	})
	if writes == nil {
		reportLoad(stdout, "DescribeServiceJob", &l, before, r, proc)
		return nil
	}
	w := <-writes
	// The CPU measured served both kinds of request.
	both := r.CPU
	r.CPU = cpuUse{}
	reportLoad(stdout, "DescribeServiceJob", &l, before, r, proc)
	fmt.Fprintf(stdout, "  meanwhile SubmitServiceJob: %.0f/s (%d clients): %d answered, %d errors\n", w.Rate(), *submitters, w.OK, w.Errors)
	fmt.Fprintf(stdout, "    latency %s\n", summarize(w.Latencies))
	if w.FirstErr != nil {
		fmt.Fprintf(stdout, "    first error: %v\n", w.FirstErr)
	}
	fmt.Fprintf(stdout, "  both together: %s\n", both.perRequest(r.OK+w.OK, before.CPUs))
	return nil
}

// submitMany submits n jobs with the given concurrency and returns their
// IDs.
func submitMany(ctx context.Context, c *client, n, conc int, spec func(int) jobSpec) ([]string, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				id, err := c.submit(ctx, spec(i))
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return ids, ctx.Err()
}
