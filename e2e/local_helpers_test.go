package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// markEnv is the payload environment variable that tags every process of a
// local-executor test job, so that /proc tells which job a process belongs
// to and whether it still runs.
const markEnv = "SHARQ_E2E_MARK"

// localServer is a `sharq serve --executor local` under test, with the
// token that marks its jobs' processes.
type localServer struct {
	*server
	mark string
}

var markSeq atomic.Int64

// startLocal starts sharq serve with the local executor and the given flags
// on dataDir (a new temp dir when empty). When the test ends the server is
// killed and any process of its jobs still alive is killed too, failing a
// test that had not failed already: tests must end every job they start.
func startLocal(t *testing.T, dataDir string, args ...string) *localServer {
	t.Helper()
	return startLocalMarked(t, dataDir, newMark(t), args...)
}

// newMark is a mark no other server's jobs carry.
func newMark(t *testing.T) string {
	return fmt.Sprintf("%s.%d.%d", strings.ReplaceAll(t.Name(), "/", "."), os.Getpid(), markSeq.Add(1))
}

// restart starts a new server on the stopped (or killed) server's data dir,
// whose jobs carry the same mark.
func (s *localServer) restart(t *testing.T, args ...string) *localServer {
	t.Helper()
	return startLocalMarked(t, s.dataDir, s.mark, args...)
}

func startLocalMarked(t *testing.T, dataDir, mark string, args ...string) *localServer {
	t.Helper()
	return startLocalWith(t, serverOptions{dataDir: dataDir, args: args}, mark)
}

// startLocalWith starts sharq serve with the local executor as opts say
// (its executor aside), its jobs carrying mark, with startLocal's checks
// when the test ends.
func startLocalWith(t *testing.T, opts serverOptions, mark string) *localServer {
	t.Helper()
	opts.executor = "local"
	s := startServer(t, opts)
	ls := &localServer{server: s, mark: mark}
	t.Cleanup(func() {
		s.kill()
		left := ls.leftovers()
		if len(left) > 0 && !t.Failed() {
			t.Errorf("processes of %s's jobs outlived the test: %v", t.Name(), left)
		}
		for pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// With no server connected and no job left, the supervisor exits.
		err := testwait.For(10*time.Second, func() error {
			if sup := supervisorsOf(s.dataDir); len(sup) > 0 {
				return fmt.Errorf("the supervisor %v still runs 10 s after the server and its jobs ended", sup)
			}
			return nil
		})
		if err != nil && !t.Failed() {
			t.Error(err)
		}
	})
	return ls
}

// leftovers lists the processes, with their command lines, that belong to
// the server's data dir or carry the server's mark, other than the
// server and the supervisor.
func (s *localServer) leftovers() map[int]string {
	out := map[int]string{}
	sups := supervisorsOf(s.dataDir)
	for _, pid := range processesUnder(s.dataDir, s.cmd.Process.Pid) {
		// A process whose command line reads empty is exiting (its memory
		// is gone; it is not yet a zombie): the supervisor, as often as not,
		// which supervisorsOf could no longer tell by its command line.
		if args := cmdline(pid); !slices.Contains(sups, pid) && args != "" {
			out[pid] = args
		}
	}
	for _, pid := range marked(s.mark + "/") {
		out[pid] = cmdline(pid)
	}
	return out
}

// supervisorsOf lists the live supervisors of the local executor of a
// server's data dir: `sharq __supervise <data-dir>/executor`. There is at
// most one, except for a moment while one exits and another starts.
func supervisorsOf(dataDir string) []int {
	var out []int
	for _, pid := range processesUnder(dataDir) {
		args := strings.Split(cmdline(pid), " ")
		if n := len(args); n >= 2 && args[n-2] == "__supervise" && args[n-1] == filepath.Join(dataDir, "executor") {
			out = append(out, pid)
		}
	}
	return out
}

// supervisor returns the pid of the data dir's one supervisor.
func (s *localServer) supervisor(t *testing.T) int {
	t.Helper()
	var pid int
	testwait.Until(t, 30*time.Second, func() error {
		sups := supervisorsOf(s.dataDir)
		if len(sups) != 1 {
			return notYet("supervisors of %s: %v, want one", s.dataDir, sups)
		}
		pid = sups[0]
		return nil
	})
	return pid
}

// waitNoProcesses waits until no process of the server's jobs is left (the
// server and the supervisor aside).
func (s *localServer) waitNoProcesses(t *testing.T, timeout time.Duration) {
	t.Helper()
	testwait.Until(t, timeout, func() error {
		if left := s.leftovers(); len(left) > 0 {
			return notYet("processes of ended jobs still run: %v", left)
		}
		return nil
	})
}

// instances lists the job's instance processes: the live processes that
// carry the job's mark and lead their process group, as the local executor
// starts each instance (what they start in turn is not listed).
func (s *localServer) instances(name string) []int {
	var out []int
	for _, pid := range s.procs(name) {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			out = append(out, pid)
		}
	}
	return out
}

// waitInstances waits until the job has exactly n instance processes.
func (s *localServer) waitInstances(t *testing.T, name string, n int, timeout time.Duration) []int {
	t.Helper()
	var pids []int
	testwait.Until(t, timeout, func() error {
		pids = s.instances(name)
		if len(pids) != n {
			return notYet("job %s has %d instance processes %v, want %d", name, len(pids), pids, n)
		}
		return nil
	})
	return pids
}

// procs lists every live process of the job.
func (s *localServer) procs(name string) []int {
	return marked(s.mark + "/" + name + "\x00")
}

// waitGone waits until no process of the job is left.
func (s *localServer) waitGone(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	testwait.Until(t, timeout, func() error {
		if pids := s.procs(name); len(pids) > 0 {
			return notYet("processes %v of job %s still run", pids, name)
		}
		return nil
	})
}

// marked lists the live processes whose environment holds markEnv with a
// value that starts with prefix (a prefix ending in NUL matches one value).
func marked(prefix string) []int {
	want := []byte("\x00" + markEnv + "=" + prefix)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err != nil || isZombie(st) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env = append([]byte{0}, env...)
		if bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// localJob is a job for the local executor.
type localJob struct {
	name     string
	share    string
	priority int32
	// argv is ContainerEntrypoint followed by ContainerArguments; the
	// entrypoint is argv[0]. Default: sleep 600.
	argv       []string
	env        map[string]string
	checkpoint string // CheckpointConfig.LocalPath
	retry      *types.ServiceJobRetryStrategy
	timeout    int32 // timeoutConfig.attemptDurationSeconds
}

// shell is the argv of a POSIX shell script.
func shell(script string) []string { return []string{"sh", "-c", script} }

// submitLocal submits the job to the walkthrough queue with the server's
// mark in its environment and returns its ARN.
func (s *localServer) submitLocal(t *testing.T, c *batch.Client, j localJob) string {
	t.Helper()
	if j.argv == nil {
		j.argv = []string{"sleep", "600"}
	}
	env := map[string]string{markEnv: s.mark + "/" + j.name}
	for k, v := range j.env {
		env[k] = v
	}
	p := map[string]any{
		"TrainingJobName": j.name,
		"AlgorithmSpecification": map[string]any{"TrainingInputMode": "File",
			"ContainerEntrypoint": j.argv[:1], "ContainerArguments": j.argv[1:]},
		"ResourceConfig":    map[string]any{"InstanceType": g5, "InstanceCount": 1, "VolumeSizeInGB": 10},
		"StoppingCondition": map[string]any{"MaxRuntimeInSeconds": 3600},
		"Environment":       env,
	}
	if j.checkpoint != "" {
		p["CheckpointConfig"] = map[string]any{"LocalPath": j.checkpoint}
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	in := &batch.SubmitServiceJobInput{JobName: aws.String(j.name), JobQueue: aws.String(queueName),
		ServiceJobType: types.ServiceJobTypeSagemakerTraining, ServiceRequestPayload: aws.String(string(b)),
		SchedulingPriority: aws.Int32(j.priority), QuotaShareName: aws.String(j.share), RetryStrategy: j.retry}
	if j.timeout > 0 {
		in.TimeoutConfig = &types.ServiceJobTimeout{AttemptDurationSeconds: aws.Int32(j.timeout)}
	}
	out, err := c.SubmitServiceJob(ctx(t), in)
	fatalIf(t, "SubmitServiceJob "+j.name, err)
	return aws.ToString(out.JobArn)
}

// attemptID is the local executor's name of an attempt: the training job
// name in its serviceResourceId.
func attemptID(t *testing.T, id *types.ServiceResourceId) string {
	t.Helper()
	m := trainingJobArn.FindStringSubmatch(aws.ToString(valueOf(id)))
	if m == nil {
		t.Fatalf("attempt serviceResourceId %s is not a training-job ARN", js(id))
	}
	return m[1]
}

func valueOf(id *types.ServiceResourceId) *string {
	if id == nil {
		return nil
	}
	return id.Value
}

// attemptDir is where the local executor keeps an attempt's files.
func (s *localServer) attemptDir(attempt string) string {
	return filepath.Join(s.dataDir, "executor", "attempts", attempt)
}

// attemptLog reads an attempt's stdout (stream "stdout") or stderr.
func (s *localServer) attemptLog(t *testing.T, attempt, stream string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.attemptDir(attempt), "logs", "algo-1."+stream))
	if err != nil {
		t.Fatalf("log of attempt %s: %v", attempt, err)
	}
	return string(b)
}

// transition is one change of an attempt's state as its supervisor
// recorded it in state.json.
type transition struct {
	State    string    `json:"state"`
	Reason   string    `json:"reason"`
	ExitCode int       `json:"exit_code"`
	At       time.Time `json:"at"`
}

// attemptHistory reads the transitions of an attempt so far.
func (s *localServer) attemptHistory(attempt string) ([]transition, error) {
	var st struct{ History []transition }
	b, err := os.ReadFile(filepath.Join(s.attemptDir(attempt), "state.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state.json of attempt %s: %w", attempt, err)
	}
	return st.History, nil
}

// waitAttemptEnd waits until the attempt's supervisor has recorded its end
// and returns that last transition.
func (s *localServer) waitAttemptEnd(t *testing.T, attempt string, timeout time.Duration) transition {
	t.Helper()
	var end transition
	testwait.Until(t, timeout, func() error {
		h, err := s.attemptHistory(attempt)
		if err != nil {
			return err
		}
		if n := len(h); n > 0 {
			end = h[n-1]
			switch end.State {
			case "SUCCEEDED", "FAILED", "STOPPED", "LOST":
				return nil
			}
		}
		return notYet("attempt %s has not ended: %+v", attempt, h)
	})
	return end
}

// startedAt is when the attempt's supervisor began starting its processes.
func (s *localServer) startedAt(t *testing.T, attempt string) time.Time {
	t.Helper()
	h, err := s.attemptHistory(attempt)
	if err != nil || len(h) == 0 || h[0].State != "STARTING" {
		t.Fatalf("attempt %s: history %+v (%v), want it to begin with STARTING", attempt, h, err)
	}
	return h[0].At
}

// endAll terminates the jobs and waits until they have ended (waitEnded).
func (s *localServer) endAll(t *testing.T, c *batch.Client, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		_, err := c.TerminateServiceJob(ctx(t), &batch.TerminateServiceJobInput{JobId: aws.String(job), Reason: aws.String("test over")})
		fatalIf(t, "TerminateServiceJob", err)
	}
	s.waitEnded(t, c, jobs...)
}

// waitEnded waits until the jobs are FAILED or SUCCEEDED and nothing of
// them runs any more.
func (s *localServer) waitEnded(t *testing.T, c *batch.Client, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		d := waitStatus(t, c, job, types.ServiceJobStatusFailed, types.ServiceJobStatusSucceeded)
		s.waitGone(t, aws.ToString(d.JobName), 60*time.Second)
		s.waitAttemptsGone(t, d, 60*time.Second)
	}
}

// waitAttemptsGone waits until no process runs in the directories of the
// job's attempts. NB: the supervisor records an attempt's end, which the
// job's status follows, once it has killed what was left of the attempt;
// a killed process may take a moment to go.
func (s *localServer) waitAttemptsGone(t *testing.T, d *batch.DescribeServiceJobOutput, timeout time.Duration) {
	t.Helper()
	testwait.Until(t, timeout, func() error {
		for _, a := range d.Attempts {
			id := attemptID(t, a.ServiceResourceId)
			if pids := processesUnder(s.attemptDir(id)); len(pids) > 0 {
				return notYet("processes of job %s's attempt %s still run: %v", aws.ToString(d.JobName), id, pids)
			}
		}
		return nil
	})
}
