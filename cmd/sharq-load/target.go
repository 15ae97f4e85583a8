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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errUsage reports bad flags; the flag package has already said why.
var errUsage = errors.New("usage")

// targetFlags say which server to drive and how to talk to it.
type targetFlags struct {
	endpoint   string
	server     string
	serverArgs string
	dataDir    string
	mode       string
	keep       bool
	pid        int
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.endpoint, "endpoint", "", "URL of a running sharq server")
	fs.StringVar(&t.server, "server", "", "path of a sharq binary to start (simulated executor, fresh data directory) instead of -endpoint")
	fs.StringVar(&t.serverArgs, "server-args", "", "extra flags for the started server, space-separated")
	fs.StringVar(&t.dataDir, "data-dir", "", "data directory of the started server (default: a new temporary one)")
	fs.BoolVar(&t.keep, "keep", false, "keep the started server's temporary data directory")
	fs.IntVar(&t.pid, "server-pid", 0, "process ID of the -endpoint server, to measure its CPU use")
	fs.StringVar(&t.mode, "client", modeWire, "how to send the measured requests: sdk (the AWS SDK for Go v2), http (net/http, same JSON) or wire (a minimal HTTP/1.1 client, same JSON)")
}

// open returns the endpoint to drive and a function that stops what open
// started.
func (t *targetFlags) open(ctx context.Context, stderr io.Writer) (string, *process, func(), error) {
	switch {
	case t.endpoint != "" && t.server != "":
		return "", nil, nil, errors.New("give -endpoint or -server, not both")
	case t.endpoint != "":
		return strings.TrimSuffix(t.endpoint, "/"), nil, func() {}, nil
	case t.server == "":
		return "", nil, nil, errors.New("give -endpoint URL (a running server) or -server PATH (a sharq binary to start)")
	}
	dir, tmp := t.dataDir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "sharq-load-")
		if err != nil {
			return "", nil, nil, err
		}
		dir, tmp = d, true
	}
	p, err := startServer(ctx, t.server, dir, strings.Fields(t.serverArgs), stderr)
	if err != nil {
		if tmp {
			os.RemoveAll(dir)
		}
		return "", nil, nil, err
	}
	if _, err := p.waitHealthy(ctx, 60*time.Second); err != nil {
		p.stop()
		return "", nil, nil, err
	}
	return p.endpoint, p, func() {
		if err := p.stop(); err != nil {
			fmt.Fprintf(stderr, "stop server: %v (log: %s)\n", err, p.logPath)
		}
		if tmp && !t.keep {
			os.RemoveAll(dir)
		}
	}, nil
}

// process is a sharq server this tool started.
type process struct {
	cmd      *exec.Cmd
	endpoint string
	logPath  string
	started  time.Time
	exited   chan struct{}
	exitErr  error
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer starts `bin serve` with the simulated executor on dataDir,
// its log in dataDir/server.log. The kernel stops the server if sharq-load
// dies first (killed, or by SIGPIPE when its output is piped to a reader
// that has gone), so that no server is left running to load the machine
// during the measurements that follow.
func startServer(ctx context.Context, bin, dataDir string, extra []string, stderr io.Writer) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dataDir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"serve", "--executor", "simulated", "--data-dir", dataDir, "--listen", addr, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	p := &process{cmd: cmd, endpoint: "http://" + addr, logPath: logPath, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.exitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitHealthy polls /healthz until it answers 200 and returns how long
// after exec that was.
func (p *process) waitHealthy(ctx context.Context, limit time.Duration) (time.Duration, error) {
	hc := &http.Client{Timeout: time.Second}
	deadline := p.started.Add(limit)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.endpoint+"/healthz", nil)
		if resp, err := hc.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(p.started), nil
			}
		}
		select {
		case <-p.exited:
			return 0, fmt.Errorf("server exited: %v (log: %s)", p.exitErr, p.logPath)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("server not healthy after %v (log: %s)", limit, p.logPath)
		}
	}
}

// stop asks the server to stop and waits for it, killing it after 30 s.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		return errors.New("killed after 30 s")
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		return p.exitErr
	}
	return nil
}

// memory reads the process's resident set now and at its peak, in bytes.
func (p *process) memory() (rss, peak int64, err error) {
	return procMemory(p.cmd.Process.Pid)
}

func procMemory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			peak = n << 10
		}
	}
	return rss, peak, nil
}

// serverPid is the process ID of the server being driven, 0 if unknown.
func (t *targetFlags) serverPid(p *process) int {
	if p != nil {
		return p.cmd.Process.Pid
	}
	return t.pid
}
