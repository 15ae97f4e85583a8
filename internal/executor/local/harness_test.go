package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// TestMain lets the test binary act as the supervisor, as the sharq binary
// does: the executor starts it again with SupervisorArg.
func TestMain(m *testing.M) {
	if code, ok := HiddenMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == attemptSupervisorArg {
		os.Exit(attemptSupervisorMain(os.Args[2:]))
	}
	// Under -race a supervisor would linger a second after its work, which
	// only slows the checks that nothing survives.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

const waitTimeout = 15 * time.Second

// harness is an executor on a temporary data dir that collects updates and
// checks at the end that no process of the test survived.
type harness struct {
	tb   testing.TB
	dir  string
	opts Options
	e    *Executor

	mu       sync.Mutex
	changed  chan struct{}
	ups      map[string][]executor.Update
	onUpdate func(executor.Update) // called for every update, if set
}

// newHarness runs without GPUs unless opts lists some.
func newHarness(tb testing.TB, opts Options) *harness {
	tb.Helper()
	if opts.GPUs == nil {
		opts.GPUs = []int{}
	}
	return openHarness(tb, opts)
}

// openHarness takes opts as they are (nil GPUs detects them); an empty
// DataDir is a new temporary one.
func openHarness(tb testing.TB, opts Options) *harness {
	tb.Helper()
	if opts.DataDir == "" {
		opts.DataDir = tb.TempDir()
	}
	h := &harness{tb: tb, dir: opts.DataDir, opts: opts}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	tb.Cleanup(h.cleanup)
	h.open()
	return h
}

// open starts a new executor on the harness's data dir and collects its
// updates.
func (h *harness) open() {
	h.tb.Helper()
	e, err := New(h.opts)
	if err != nil {
		h.tb.Fatalf("New: %v", err)
	}
	h.mu.Lock()
	h.e, h.ups, h.changed = e, map[string][]executor.Update{}, make(chan struct{})
	h.mu.Unlock()
	go func() {
		for u := range e.Updates() {
			h.mu.Lock()
			if h.onUpdate != nil {
				h.onUpdate(u)
			}
			h.ups[u.AttemptID] = append(h.ups[u.AttemptID], u)
			close(h.changed)
			h.changed = make(chan struct{})
			h.mu.Unlock()
		}
	}()
}

// reopen closes the executor and opens a new one on the same data dir, as
// a restarted server would.
func (h *harness) reopen() {
	h.tb.Helper()
	if err := h.e.Close(); err != nil {
		h.tb.Fatalf("Close: %v", err)
	}
	h.open()
}

func (h *harness) start(a executor.Attempt) {
	h.tb.Helper()
	if err := h.e.Start(h.tb.Context(), a); err != nil {
		h.tb.Fatalf("Start %s: %v", a.ID, err)
	}
}

func (h *harness) stop(id string, grace time.Duration) {
	h.tb.Helper()
	if err := h.e.Stop(h.tb.Context(), id, grace); err != nil {
		h.tb.Fatalf("Stop %s: %v", id, err)
	}
}

// await waits for the attempt's update with state want and returns it.
func (h *harness) await(id string, want executor.State) executor.Update {
	h.tb.Helper()
	return h.awaitWithin(id, want, waitTimeout)
}

// awaitWithin is await with a bound of its own.
func (h *harness) awaitWithin(id string, want executor.State, waitTimeout time.Duration) executor.Update {
	h.tb.Helper()
	deadline := time.After(waitTimeout)
	for {
		h.mu.Lock()
		ups, changed := h.ups[id], h.changed
		h.mu.Unlock()
		for _, u := range ups {
			if u.State == want {
				return u
			}
			if u.State.Terminal() {
				h.tb.Fatalf("attempt %s ended %s (%q) while waiting for %s", id, u.State, u.Reason, want)
			}
		}
		select {
		case <-changed:
		case <-deadline:
			h.tb.Fatalf("attempt %s: no %s within %s; updates: %+v", id, want, waitTimeout, ups)
		}
	}
}

func (h *harness) updates(id string) []executor.Update {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]executor.Update(nil), h.ups[id]...)
}

func states(ups []executor.Update) []executor.State {
	var ss []executor.State
	for _, u := range ups {
		ss = append(ss, u.State)
	}
	return ss
}

func (h *harness) attemptDir(id string) string { return filepath.Join(h.dir, "attempts", id) }

func (h *harness) status(id string) status {
	h.tb.Helper()
	st, err := readStatus(h.attemptDir(id))
	if err != nil {
		h.tb.Fatalf("read status: %v", err)
	}
	return st
}

// waitFile waits until the file exists with content containing want and
// returns the content.
func waitFile(tb testing.TB, path, want string) string {
	tb.Helper()
	var b []byte
	testwait.Until(tb, waitTimeout, func() error {
		if b, _ = os.ReadFile(path); len(b) == 0 || !strings.Contains(string(b), want) {
			return fmt.Errorf("%s: no %q; have %q", path, want, b)
		}
		return nil
	})
	return string(b)
}

func (h *harness) log(id, host, stream string) string {
	b, _ := os.ReadFile(filepath.Join(h.attemptDir(id), logsDir, host+"."+stream))
	return string(b)
}

// cleanup closes the executor, then checks that no supervisor of the test
// and no process of their sessions is left; any survivor is killed and
// fails the test.
func (h *harness) cleanup() {
	h.e.Close()
	sids := h.supervisors()
	var left []int
	if testwait.For(5*time.Second, func() error {
		if left = survivors(sids); len(left) > 0 {
			return errors.New("survivors")
		}
		return nil
	}) != nil {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		h.tb.Errorf("processes survived the test: %v", left)
	}
}

// waitSupervisorsReaped waits until every supervisor the executor started
// has exited and been reaped.
func (h *harness) waitSupervisorsReaped() {
	h.tb.Helper()
	h.e.sup.startedMu.Lock()
	started := maps.Clone(h.e.sup.started)
	h.e.sup.startedMu.Unlock()
	for pid, s := range started {
		select {
		case <-s.reaped:
		case <-time.After(waitTimeout):
			h.tb.Fatalf("supervisor %d still runs", pid)
		}
	}
}

func (h *harness) supervisors() map[int]bool {
	sids := map[int]bool{}
	ents, _ := os.ReadDir(filepath.Join(h.dir, "attempts"))
	for _, ent := range ents {
		st, _ := readStatus(filepath.Join(h.dir, "attempts", ent.Name()))
		if st.Supervisor > 0 {
			sids[st.Supervisor] = true
		}
	}
	return sids
}

// survivors lists live processes that are one of the supervisors or in one
// of their sessions (instances and everything they started).
func survivors(sids map[int]bool) []int {
	var left []int
	eachProc(func(pid int, ps procStat) {
		if sids[pid] || sids[ps.Session] {
			left = append(left, pid)
		}
	})
	return left
}

// job builds a CreateTrainingJob payload.
type job struct {
	Image      string
	Entrypoint []string
	Args       []string
	Env        map[string]string
	HPs        map[string]any
	Channels   map[string]string
	Checkpoint string
	// CheckpointURI and OutputPath are CheckpointConfig.S3Uri and
	// OutputDataConfig.S3OutputPath.
	CheckpointURI string
	OutputPath    string
	MaxRuntime    int
}

func sh(script string) job { return job{Entrypoint: []string{"sh", "-c", script}} }

func (j job) withEnv(kv ...string) job {
	if j.Env == nil {
		j.Env = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		j.Env[kv[i]] = kv[i+1]
	}
	return j
}

func (j job) payload() []byte {
	p := map[string]any{
		"TrainingJobName":        "tj",
		"AlgorithmSpecification": map[string]any{"TrainingImage": j.Image, "ContainerEntrypoint": j.Entrypoint, "ContainerArguments": j.Args, "TrainingInputMode": "File"},
		"Environment":            j.Env,
		"HyperParameters":        j.HPs,
		"ResourceConfig":         map[string]any{"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
	}
	var chans []any
	for name, uri := range j.Channels {
		chans = append(chans, map[string]any{"ChannelName": name, "DataSource": map[string]any{"S3DataSource": map[string]any{"S3Uri": uri, "S3DataType": "S3Prefix"}}})
	}
	p["InputDataConfig"] = chans
	if j.Checkpoint != "" || j.CheckpointURI != "" {
		p["CheckpointConfig"] = map[string]any{"LocalPath": j.Checkpoint, "S3Uri": j.CheckpointURI}
	}
	if j.OutputPath != "" {
		p["OutputDataConfig"] = map[string]any{"S3OutputPath": j.OutputPath}
	}
	if j.MaxRuntime > 0 {
		p["StoppingCondition"] = map[string]any{"MaxRuntimeInSeconds": j.MaxRuntime}
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

func attemptOf(id, jobID string, j job) executor.Attempt {
	return executor.Attempt{ID: id, JobID: jobID, JobName: "name-" + jobID, Payload: j.payload()}
}

// treePath is where a host of an attempt sees rel of its /opt/ml tree: at
// /opt/ml when it was started in a mount namespace.
func (h *harness) treePath(attempt, host, rel string) string {
	if spec := readSpec(h.attemptDir(attempt)); spec != nil && len(spec.Hosts) > 0 && spec.Hosts[0].MountNS {
		return "/opt/ml/" + rel
	}
	return filepath.Join(h.attemptDir(attempt), "hosts", host, rel)
}

// attemptIDs lists the attempts the harness started.
func (h *harness) attemptIDs() []string {
	ents, _ := os.ReadDir(filepath.Join(h.dir, "attempts"))
	var ids []string
	for _, e := range ents {
		ids = append(ids, e.Name())
	}
	return ids
}
