package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/sim"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

const traceUsage = `usage: sharq trace export [--endpoint URL | --data-dir DIR] [-o FILE] [--format csv|jsonl]

Writes a server's job history as a trace that 'sharq sim --trace' replays:
each job submitted at its createdAt with its share, priority and capacity,
running as long as it ran (or its MaxRuntimeInSeconds), cancelled when it
was terminated. Without --data-dir it reads the server at --endpoint
(default $SHARQ_ENDPOINT, else $AWS_ENDPOINT_URL_BATCH, else
http://127.0.0.1:8080, as for the other verbs).

Flags:
`

func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprint(stderr, traceUsage)
		return 2
	}
	fs := flag.NewFlagSet("trace export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, traceUsage); fs.PrintDefaults() }
	endpoint := fs.String("endpoint", "", "URL of a running sharq server, e.g. http://127.0.0.1:8080 (default $SHARQ_ENDPOINT, else $AWS_ENDPOINT_URL_BATCH)")
	dataDir := fs.String("data-dir", "", "a server's data directory, to read its database directly")
	out := fs.String("o", "", "file to write (default standard output)")
	format := fs.String("format", "csv", "csv or jsonl")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *endpoint == "" && *dataDir == "" {
		*endpoint = cmp.Or(os.Getenv("SHARQ_ENDPOINT"), os.Getenv("AWS_ENDPOINT_URL_BATCH"), "http://127.0.0.1:8080")
	}
	if (*endpoint == "") == (*dataDir == "") || (*format != "csv" && *format != "jsonl") || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if err := exportTrace(ctx, *endpoint, *dataDir, *out, *format, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "sharq trace export: %v\n", err)
		return 1
	}
	return 0
}

func exportTrace(ctx context.Context, endpoint, dataDir, out, format string, stdout, stderr io.Writer) error {
	jobs, err := readJobs(ctx, endpoint, dataDir)
	if err != nil {
		return err
	}
	w, guessed := sim.FromJobs(jobs)
	if guessed > 0 {
		fmt.Fprintf(stderr, "sharq trace export: %d jobs have not finished and set no MaxRuntimeInSeconds: they run %s in the trace\n", guessed, sim.DefaultRuntime)
	}
	write := func(dst io.Writer) error {
		if format == "jsonl" {
			return sim.WriteJSONL(dst, w)
		}
		return sim.WriteCSV(dst, w)
	}
	if out == "" {
		return write(stdout)
	}
	return writeFile(out, write)
}

func readJobs(ctx context.Context, endpoint, dataDir string) ([]batchapi.ServiceJob, error) {
	if endpoint != "" {
		return sim.JobsFromServer(ctx, nil, endpoint)
	}
	path := filepath.Join(dataDir, "sharq.db")
	if _, err := os.Stat(path); err != nil {
		return nil, errors.New("no sharq.db in " + dataDir)
	}
	st, err := sqlite.Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return sim.JobsFromStore(ctx, st)
}
