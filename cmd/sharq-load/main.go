// Command sharq-load measures a sharq server through the AWS Batch API: it
// drives a running `sharq serve` (or starts one) with many concurrent
// clients and reports throughput, latency and the Kueue baseline
// workload's figures, next to the machine and its load.
//
//	sharq-load submit    SubmitServiceJob throughput (each answered after a durable commit)
//	sharq-load describe  DescribeServiceJob throughput
//	sharq-load latency   submit-to-SCHEDULED latency while capacity is free
//	sharq-load seed      write a store of N jobs shaped by the engine, for restart
//	sharq-load restart   time `sharq serve` from exec to serving over a seeded store
//	sharq-load baseline  Kueue's baseline workload in real time through the server
//	sharq-load server    run the server in this process (with -cpuprofile), for profiles
//
// submit, describe, latency and baseline take either -endpoint (a server
// already running) or -server (a sharq binary, started with the simulated
// executor on a fresh data directory and stopped at the end); restart
// starts the binary on a seeded directory. The measured requests go through
// the AWS SDK for Go v2 Batch client (-client sdk), net/http's client with
// the same JSON (-client http), or a minimal HTTP/1.1 client (-client wire,
// the default), which costs the shared CPUs the least.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ignoreClosedOutput()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// ignoreClosedOutput lets a run whose output reader has gone (a pipe to
// head, say) finish and clean up, its server stopped and its data removed,
// instead of dying of SIGPIPE at its next line: the writes fail, and the
// report is lost, but nothing is left behind.
func ignoreClosedOutput() { signal.Ignore(syscall.SIGPIPE) }

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"submit", "SubmitServiceJob throughput", runSubmit},
		{"describe", "DescribeServiceJob throughput", runDescribe},
		{"latency", "submit-to-SCHEDULED latency with free capacity", runLatency},
		{"seed", "write a store of N engine-shaped jobs", runSeed},
		{"restart", "time a server's start over a seeded store", runRestart},
		{"baseline", "Kueue's baseline workload in real time", runBaseline},
		{"server", "run the server in this process, for CPU profiles", runServer},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
			if err == errUsage {
				return 2
			}
			fmt.Fprintf(stderr, "sharq-load %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "sharq-load: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sharq-load <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'sharq-load <command> -h' for a command's flags.")
}
