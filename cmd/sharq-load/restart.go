package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// restartResult is one timed start of a server over a seeded store.
type restartResult struct {
	Healthy, Described time.Duration // from exec
	RSS, PeakRSS       int64
	CPU                time.Duration // the server's CPU until it described the job
}

// timeRestart starts the server over dir, waits until /healthz answers and
// a DescribeServiceJob of a seeded job succeeds, and stops it.
func timeRestart(ctx context.Context, bin, dir string, extra []string, id string, stderr io.Writer) (restartResult, error) {
	var r restartResult
	p, err := startServer(ctx, bin, dir, extra, stderr)
	if err != nil {
		return r, err
	}
	defer p.stop()
	if r.Healthy, err = p.waitHealthy(ctx, 10*time.Minute); err != nil {
		return r, err
	}
	c, err := newClient(p.endpoint, modeHTTP, 1)
	if err != nil {
		return r, err
	}
	defer c.close()
	for {
		v, err := c.describe(ctx, id)
		if err == nil && v.ID == id {
			break
		}
		if time.Since(p.started) > 10*time.Minute {
			return r, fmt.Errorf("describe %s: %v", id, err)
		}
		time.Sleep(time.Millisecond)
	}
	r.Described = time.Since(p.started)
	r.CPU, _ = procCPU(p.cmd.Process.Pid)
	r.RSS, r.PeakRSS, err = p.memory()
	return r, err
}

func runRestart(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("server", "", "path of the sharq binary to time")
	dir := fs.String("data-dir", "", "a data directory written by sharq-load seed")
	serverArgs := fs.String("server-args", "", "extra flags for the server, space-separated")
	runs := fs.Int("runs", 3, "starts to time")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *bin == "" || *dir == "" {
		fmt.Fprintln(stderr, "restart: -server and -data-dir are required")
		return errUsage
	}
	b, err := os.ReadFile(filepath.Join(*dir, seedInfoFile))
	if err != nil {
		return fmt.Errorf("%w (seed the directory with sharq-load seed first)", err)
	}
	var info seedInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return err
	}
	if len(info.Sample) == 0 {
		return errors.New("seed.json names no jobs")
	}
	fmt.Fprintf(stdout, "restart over %d jobs (%d ended, %d RUNNABLE, %d RUNNING) in %s\n", info.Jobs, info.Ended, info.Runnable, info.Running, *dir)
	var healthy, described []time.Duration
	for i := range *runs {
		before := loadavg()
		// A different job each time, from the end of the store: the last
		// seeded, so the whole store must have been read.
		id := info.Sample[len(info.Sample)-1-i%len(info.Sample)]
		r, err := timeRestart(ctx, *bin, *dir, strings.Fields(*serverArgs), id, stderr)
		if err != nil {
			return err
		}
		healthy, described = append(healthy, r.Healthy), append(described, r.Described)
		fmt.Fprintf(stdout, "  run %d: /healthz 200 after %.2f s, DescribeServiceJob after %.2f s; server CPU %.1f s; RSS %d MiB (peak %d MiB); load %.2f before, %.2f after\n",
			i+1, r.Healthy.Seconds(), r.Described.Seconds(), r.CPU.Seconds(), r.RSS>>20, r.PeakRSS>>20, before[0], loadavg()[0])
	}
	slices.Sort(healthy)
	slices.Sort(described)
	fmt.Fprintf(stdout, "  median: /healthz %.2f s, DescribeServiceJob %.2f s (%d runs); machine %s\n",
		healthy[len(healthy)/2].Seconds(), described[len(described)/2].Seconds(), len(healthy), machine())
	return nil
}
