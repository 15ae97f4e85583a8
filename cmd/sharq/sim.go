package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/sim"
)

type simFlags struct {
	config, trace, workload, compare string
	output, html                     string
	writeTrace, writeConfig          string
	cpuProfile                       string
	seed                             uint64
	checkpoint, startup              time.Duration
	minRuntime                       time.Duration // < 0: as the cluster files say
	timeline, noRun                  bool
}

const simUsage = `usage: sharq sim [--config cluster.yaml] (--trace FILE | --workload NAME) [flags]

Replays a workload against a cluster configuration in virtual time, with the
real scheduler, and reports utilisation, time to dispatch and preemptions.

Workloads: kueue-baseline, kueue-large (both bring their own cluster), and
random[:jobs=N,load=F,runtime=S,max-count=N,priorities=N,changes=F,cancels=F,shares=N]
(on --config, or on a made-up cluster of 'shares' shares).

A trace is CSV with a header row, or JSON lines, one event each:
  at,event,job,share,priority,instance_type,instance_count,runtime
  0,submit,train-1,QS1,3,ml.g5.xlarge,1,600
  20,priority,train-1,,4,,,
  90,cancel,train-1,,,,,
'at' and 'runtime' are seconds or Go durations (1m30s); optional columns:
queue, class, name, preemption_retries, and instance_groups for a job of
several instance groups (ResourceConfig.InstanceGroups), instead of
instance_type and instance_count (in JSON lines, the same string):
  at,event,job,share,priority,runtime,instance_groups
  0,submit,hetero,QS1,0,600,ml.g5.xlarge:2+ml.p4d.24xlarge:1
'sharq trace export' writes one.

Flags:
`

// batchGC tunes the garbage collector for a simulation, a batch run whose
// heap is mostly garbage: it collects a quarter as often as by default,
// within a soft limit of 1.5 GiB that a long trace makes it respect. GOGC
// and GOMEMLIMIT in the environment still decide when set.
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1536 << 20)
	}
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	batchGC()
	var f simFlags
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simUsage); fs.PrintDefaults() }
	fs.StringVar(&f.config, "config", "", "cluster configuration (YAML, as for sharq apply -f)")
	fs.StringVar(&f.trace, "trace", "", "workload trace: CSV or JSON lines (see sharq trace export)")
	fs.StringVar(&f.workload, "workload", "", "built-in workload: kueue-baseline, kueue-large or random[:k=v,...]")
	fs.StringVar(&f.compare, "compare", "", "a second cluster configuration to run the same workload on, side by side")
	fs.StringVar(&f.output, "o", "text", "report format: text or json")
	fs.StringVar(&f.html, "html", "", "also write an offline HTML report with charts to this file")
	fs.StringVar(&f.writeTrace, "write-trace", "", "write the workload as a CSV trace to this file (e.g. to edit a generated one)")
	fs.StringVar(&f.writeConfig, "write-config", "", "write the cluster configuration as YAML to this file (e.g. a built-in workload's)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of generated workloads")
	fs.DurationVar(&f.checkpoint, "checkpoint-interval", 0, "how often jobs checkpoint; a preempted job loses the work since its last checkpoint (0: restarts from scratch)")
	fs.DurationVar(&f.startup, "startup-delay", 0, "time from SCHEDULED to RUNNING")
	fs.DurationVar(&f.minRuntime, "min-runtime", -time.Second, "give every quota share this minimum runtime before preemption, in whole seconds (-1s: as the cluster files say)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the simulation to this file")
	fs.BoolVar(&f.noRun, "no-run", false, "only write --write-trace and --write-config, do not simulate")
	fs.BoolVar(&f.timeline, "timeline", false, "list every dispatch, preemption and end in the report")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (f.trace == "") == (f.workload == "") || (f.output != "text" && f.output != "json") {
		fmt.Fprintln(stderr, "sharq sim: give exactly one of --trace and --workload, and -o text or json")
		fs.Usage()
		return 2
	}
	if f.cpuProfile != "" {
		stop, err := startProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "sharq sim: %v\n", err)
			return 1
		}
		defer stop()
	}
	if err := simulate(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "sharq sim: seed=%d: %v\n", f.seed, err)
		return 1
	}
	return 0
}

func simulate(ctx context.Context, f simFlags, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	w, err := loadWorkload(f, cfg)
	if err != nil {
		return err
	}
	setMinRuntime(f, cfg, w.Config)
	if err := writeInputs(f, w, cfg); err != nil || f.noRun {
		return err
	}
	opts := sim.Options{CheckpointInterval: f.checkpoint, StartupDelay: f.startup, Timeline: f.timeline}
	if f.compare == "" {
		r, err := runOne(ctx, w, cfg, opts, "", stderr)
		if err != nil {
			return err
		}
		return emit(f, stdout, r)
	}
	other, err := loadConfig(f.compare)
	if err != nil {
		return err
	}
	setMinRuntime(f, other)
	c := &sim.Comparison{NameA: configName(f.config, w), NameB: filepath.Base(f.compare)}
	if c.A, err = runOne(ctx, w, cfg, opts, "A ", stderr); err != nil {
		return err
	}
	if c.B, err = runOne(ctx, w, other, opts, "B ", stderr); err != nil {
		return err
	}
	return emit(f, stdout, c)
}

// setMinRuntime gives every quota share of the configurations the minimum
// runtime of --min-runtime, when it is given.
func setMinRuntime(f simFlags, cfgs ...*clusterconfig.Config) {
	if f.minRuntime < 0 {
		return
	}
	for _, c := range cfgs {
		if c != nil {
			c.SetMinimumRuntime(f.minRuntime)
		}
	}
}

// writeInputs writes the workload and the cluster configuration when asked
// to, so a generated run can be edited and replayed.
func writeInputs(f simFlags, w *sim.Workload, cfg *clusterconfig.Config) error {
	if f.writeTrace != "" {
		if err := writeFile(f.writeTrace, func(out io.Writer) error { return sim.WriteCSV(out, w) }); err != nil {
			return err
		}
	}
	if cfg == nil {
		cfg = w.Config
	}
	if f.writeConfig == "" || cfg == nil {
		return nil
	}
	b, err := clusterconfig.Marshal(cfg)
	if err != nil {
		return err
	}
	return writeFile(f.writeConfig, func(out io.Writer) error { _, err := out.Write(b); return err })
}

func configName(path string, w *sim.Workload) string {
	if path == "" {
		return w.Name + " cluster"
	}
	return filepath.Base(path)
}

func loadConfig(path string) (*clusterconfig.Config, error) {
	if path == "" {
		return nil, nil
	}
	return clusterconfig.Load(path)
}

func loadWorkload(f simFlags, cfg *clusterconfig.Config) (*sim.Workload, error) {
	if f.trace != "" {
		if cfg == nil {
			return nil, errors.New("a trace needs --config")
		}
		return sim.ReadTraceFile(f.trace)
	}
	w, err := sim.Builtin(f.workload, f.seed, cfg)
	if err != nil {
		return nil, err
	}
	if cfg != nil && w.Config != nil && !strings.HasPrefix(f.workload, "random") {
		return nil, fmt.Errorf("workload %s brings its own cluster: drop --config", f.workload)
	}
	return w, nil
}

// runOne runs one simulation, with a progress bar when stderr is a
// terminal.
func runOne(ctx context.Context, w *sim.Workload, cfg *clusterconfig.Config, opts sim.Options, label string, stderr io.Writer) (*sim.Report, error) {
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		bar := &progressBar{w: stderr, label: label, start: time.Now()}
		opts.Progress = bar.update
		defer bar.done()
	}
	s, err := sim.New(ctx, w, cfg, opts)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx)
}

// report is what sim writes: one report or a comparison.
type report interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
	WriteHTML(io.Writer) error
}

func emit(f simFlags, stdout io.Writer, r report) error {
	if f.html != "" {
		if err := writeFile(f.html, r.WriteHTML); err != nil {
			return err
		}
	}
	if f.output == "json" {
		return r.WriteJSON(stdout)
	}
	return r.WriteText(stdout)
}

func writeFile(path string, write func(io.Writer) error) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(out); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Close()
}

func startProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

// progressBar redraws one line on a terminal.
type progressBar struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
}

func (p *progressBar) update(done, total int) {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond && done < total {
		return
	}
	p.last = now
	const width = 30
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	n := int(frac * width)
	fmt.Fprintf(p.w, "\r%s[%s%s] %3.0f%% %d/%d jobs %s", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n),
		100*frac, done, total, now.Sub(p.start).Round(100*time.Millisecond))
}

func (p *progressBar) done() { fmt.Fprint(p.w, "\r\033[K") }
