// Command sharq is a quota-share scheduler for shared GPU capacity that
// serves the AWS Batch API.
//
//	sharq serve [flags]      run the server (the AWS Batch API on --listen)
//	sharq submit|jobs|...    client verbs against a server (package cli)
//	sharq help               list the commands
//	sharq version            print the version (also --version)
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/sharq-dev/sharq/internal/cli"
	"github.com/sharq-dev/sharq/internal/executor/local"
	"github.com/sharq-dev/sharq/internal/podhost"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == podhost.Arg {
		os.Exit(podhost.Main(os.Args[2:]))
	}
	if code, ok := local.HiddenMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand: it returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "run the server: the AWS Batch API, the scheduler and the executor", runServe},
		{"sim", "replay a workload against a cluster config in virtual time and report", runSim},
		{"trace", "export a server's job history as a trace for sim (trace export)", runTrace},
		{"apply", "create or update queues and quota shares from a YAML file", cli.Apply},
		{"submit", "submit a training job", cli.Submit},
		{"jobs", "list jobs, with where waiting ones stand and why", cli.Jobs},
		{"describe", "show a job and its timeline", cli.Describe},
		{"priority", "change a job's scheduling priority", cli.Priority},
		{"cancel", "terminate jobs", cli.Cancel},
		{"logs", "print or follow a job's output", cli.Logs},
		{"wait", "wait for a job to end; exit 0 if it succeeded, 1 if it failed", cli.Wait},
		{"shares", "show each quota share's own, borrowed, lent and idle capacity", cli.Shares},
		{"usage", "show the capacity used over a period: own, borrowed, lent and preempted", cli.Usage},
		{"top", "watch shares and jobs live", cli.Top},
		{"events", "show or follow job state changes", cli.Events},
		{"admin", "manage access keys (admin keys create|list|disable|enable|delete)", runAdmin},
		{"version", "print sharq's version and the revision it was built from (also --version)", runVersion},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "sharq: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sharq <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'sharq <command> -h' for a command's flags.")
}

// newLogger logs text on a terminal and JSON otherwise.
func newLogger(w io.Writer, level *slog.LevelVar) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
