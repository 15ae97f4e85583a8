package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/sharq-dev/sharq/internal/batchapi"
	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/executor/simulated"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

// runServer serves the API in this process, wired as `sharq serve
// --executor simulated` is, so that a CPU profile covers the server alone
// while another sharq-load process drives it.
func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:18080", "address to serve on")
	dataDir := fs.String("data-dir", "", "data directory (default: a new temporary one, removed at exit)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run here")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dataDir == "" {
		d, err := os.MkdirTemp("", "sharq-load-server-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dataDir = d
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return serveInProcess(ctx, *listen, *dataDir, func(addr string) { fmt.Fprintf(stdout, "serving on http://%s\n", addr) })
}

// serveInProcess runs the engine and the API on addr until ctx ends.
func serveInProcess(ctx context.Context, addr, dataDir string, ready func(addr string)) error {
	st, err := sqlite.Open(filepath.Join(dataDir, "sharq.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	ex := simulated.New()
	defer ex.Close()
	eng, err := engine.New(ctx, engine.Options{Store: st, Executor: ex})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.Handle("/v1/", batchapi.New(eng, batchapi.Options{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(runCtx) }()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(ln) }()
	ready(ln.Addr().String())
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-engDone:
		engDone <- runErr
	case runErr = <-srvDone:
	}
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	srv.Shutdown(shutdown)
	cancel()
	if err := <-engDone; err != nil && runErr == nil {
		runErr = err
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}
