package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sharq-dev/sharq/internal/testwait"
	"golang.org/x/sys/unix"
)

// Ensure the short IDs tables print name jobs in every verb, and that a
// part of an ID that fits several jobs is refused with the jobs it fits.
func TestShortIDs(t *testing.T) {
	s := announcementJobs(t)
	golden(t, "describe_blocked", s.ok(Describe, "00000003"))
	golden(t, "priority", s.ok(Priority, "00000004", "7"))
	if out := s.ok(Describe, "00000005", "-o", "json"); !strings.Contains(out, jobID(5)) {
		t.Errorf("describe by short ID: %s", out)
	}
	r := s.run(Describe, "01a22d8d")
	expect(t, r, ExitUsage, "01a22d8d is ambiguous: it is part of the IDs of "+jobID(1)+" (a1), "+jobID(2)+" (a2)")
	golden(t, "short_id_ambiguous", r.stderr)
	expect(t, s.run(Wait, "0000000f"), ExitNotFound, "no job has the ID or name 0000000f")
	expect(t, s.run(Events, "--job", "00000002"), ExitOK, "")
}

// Ensure one usage rule holds in every verb: a value the verb can check
// itself is a usage error (exit 2) before anything is sent, and -h shows
// each default once.
func TestUsageRule(t *testing.T) {
	s := announcementJobs(t)
	for _, c := range []struct {
		verb verbFunc
		args []string
		msg  string
	}{
		{Submit, []string{"--priority", "10000", "--", "train"}, "--priority must be 0 to 9999, not 10000"},
		{Priority, []string{"a1", "10000"}, "the priority must be 0 to 9999, not 10000"},
		{Submit, []string{"--priority", "-1", "--", "train"}, "--priority must be 0 to 9999, not -1"},
		{Priority, []string{"a1", "--", "-1"}, "the priority must be 0 to 9999, not -1"},
		{Submit, []string{"--priority", "high", "--", "train"}, `invalid value "high" for flag -priority`},
		{Priority, []string{"a1", "high"}, "the priority must be a number"},
		{Submit, []string{"--count", "0", "--", "train"}, "--count must be at least 1, not 0"},
		{Submit, []string{"--retries", "10", "--", "train"}, "--retries must be 0 to 9, not 10"},
		{Submit, []string{"--preemption-retries", "-2", "--", "train"}, "--preemption-retries must be at least 0"},
		{Submit, []string{"--timeout", "10s", "--", "train"}, "--timeout must be at least 60s, not 10s"},
		{Logs, []string{"a1", "--host", "node1"}, `--host must be algo-N, not "node1"`},
		{Logs, []string{"a1", "--attempt", "-1"}, "--attempt must be 1 or more"},
		{Top, []string{"--interval", "0s"}, "--interval must be more than 0"},
		{Cancel, []string{"a1", "--share", "QS1"}, "give either jobs or --share, not both"},
		{Cancel, []string{"--status", "RUNNABLE"}, "name the jobs to cancel, or give --share"},
		{Jobs, []string{"--status", "DONE"}, `unknown status "DONE"`},
	} {
		expect(t, s.run(c.verb, c.args...), ExitUsage, c.msg)
	}
	if n := len(s.ok(Jobs, "--status", "all", "-o", "json")); n == 0 {
		t.Error("no jobs")
	}
	r := s.run(Submit, "-h")
	expect(t, r, ExitOK, "")
	golden(t, "submit_help", r.stderr)
	if regexp.MustCompile(`\(default[^)]*\) \(default`).MatchString(r.stderr) {
		t.Errorf("a default shown twice:\n%s", r.stderr)
	}
}

// Ensure `sharq jobs` with nothing unfinished says so and how to see the
// ended jobs.
func TestJobsNoneUnfinished(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	golden(t, "jobs_no_unfinished", s.ok(Jobs))
	golden(t, "jobs_none", s.ok(Jobs, "--status", "SUCCEEDED"))
}

// Ensure cancel ends all the jobs it names in one cycle: cancelling the
// running a1 with the waiting a2 and a3 must not hand a1's instance to a2
// or a3 for a moment; a4, behind them, gets it. --share cancels a share's
// jobs, or those of some statuses.
func TestCancelMany(t *testing.T) {
	s := announcementJobs(t)
	golden(t, "cancel_many", s.ok(Cancel, "a1", "00000002", "a3"))
	for _, n := range []int{1, 2, 3} {
		s.waitStatus(jobID(n), "FAILED")
	}
	s.waitStatus(jobID(4), "RUNNING")
	for n, before := range map[int]int{2: 1, 3: 0} { // a2 ran once before it was preempted
		if evs := s.ok(Events, "--job", jobID(n)); strings.Count(evs, "SCHEDULED") != before {
			t.Errorf("job %d was dispatched while it was being cancelled:\n%s", n, evs)
		}
	}
	golden(t, "cancel_share_status", s.ok(Cancel, "--share", "QS2", "--status", "RUNNABLE"))
	s.waitStatus(jobID(5), "FAILED")
	if st := s.status(jobID(6)); st != "RUNNING" {
		t.Errorf("d1 is %s: --status RUNNABLE cancelled it", st)
	}
	golden(t, "cancel_share", s.ok(Cancel, "--share", "QS2"))
	s.waitStatus(jobID(6), "FAILED")
	if out := s.ok(Cancel, "--share", "QS2"); out != "no unfinished job in share QS2\n" {
		t.Errorf("an empty share: %q", out)
	}
}

// longName is a job name of AWS's maximum length with no break in it.
var longName = strings.Repeat("llama3-70b-finetune-", 5) + "instruct-lr3e-5-warmup-run07"

// Ensure a name of 128 characters leaves the tables legible: `sharq jobs`
// and the events show its two ends, describe all of it, and `sharq top`
// on an 80-column terminal keeps every job's ID, share and status in view.
func TestLongNames(t *testing.T) {
	s := announcementJobs(t)
	if len(longName) != 128 {
		t.Fatalf("longName is %d characters", len(longName))
	}
	s.ok(Submit, "--share", "QS3", "--name", longName, "--", "train")
	s.waitStatus(jobID(7), "RUNNING")
	golden(t, "jobs_long_name", s.ok(Jobs, "--share", "QS3"))
	if out := s.ok(Describe, "00000007"); !strings.Contains(out, "Name:       "+longName+"\n") {
		t.Errorf("describe does not show the whole name:\n%s", out)
	}
	screen := topOnTerminal(t, s, 80, 40)
	golden(t, "top_80_columns", strings.ReplaceAll(screen, s.url, "http://SERVER"))
	for _, l := range strings.Split(screen, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	row := `(?m)^` + regexp.QuoteMeta(squeeze(longName, nameWidth)) + ` +00000007 +QS3 +RUNNING `
	if !regexp.MustCompile(row).MatchString(screen) {
		t.Errorf("the long-named job's row is not legible:\n%s", screen)
	}
}

// topOnTerminal runs `sharq top` with its output on a pseudo-terminal of
// the given size and returns the first screen as text, escapes removed.
func topOnTerminal(t *testing.T, s *server, cols, rows int) string {
	t.Helper()
	ptmx, tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var out bytes.Buffer
	done, screen := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			out.Write(b[:n])
			// A screen ends by erasing what is below it.
			if ctx.Err() == nil && bytes.Contains(out.Bytes(), []byte(escEraseBelow)) {
				close(screen)
				cancel()
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var errOut bytes.Buffer
	if code := Top(ctx, []string{"--endpoint", s.url, "--interval", "1h"}, tty, &errOut); code != 0 {
		t.Fatalf("top: exit %d: %s", code, errOut.String())
	}
	// top also ends when its input does (a test run with stdin at EOF):
	// what it wrote is still on its way through the terminal, and closing
	// the terminal now would drop it.
	select {
	case <-screen:
	case <-time.After(15 * time.Second):
		t.Fatal("top wrote no whole screen")
	}
	tty.Close()
	ptmx.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	text := regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`).ReplaceAllString(out.String(), "")
	return strings.ReplaceAll(text, "\r\n", "\n")
}

// openPTY opens a pseudo-terminal pair: the controlling side and the
// terminal a program writes to.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}

// Ensure `logs -f` across attempts puts each attempt's header before that
// attempt's lines, the first attempt's included.
func TestLogsFollowHeaders(t *testing.T) {
	s := newServer(t, true)
	s.ok(Apply, "-f", announcement)
	// Each attempt prints, then ends once go exists: the test creates it
	// when logs -f has shown the first attempt, which may not have ended
	// before logs started.
	release := filepath.Join(t.TempDir(), "go")
	s.ok(Submit, "--share", "QS1", "--name", "flaky", "--retries", "1", "--", "sh", "-c",
		"echo out; while [ ! -e "+release+" ]; do sleep 0.05; done; exit 1")
	var both syncBuffer // stdout and stderr in the order they were written
	done := make(chan int, 1)
	go func() {
		done <- Logs(t.Context(), []string{"--endpoint", s.url, "-f", "--stream", "stdout", "flaky"}, &both, &both)
	}()
	testwait.True(t, 15*time.Second, "logs -f showing the first attempt", func() bool { return strings.Contains(both.String(), "out\n") })
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, both.String())
	}
	golden(t, "logs_follow_attempts", both.String())
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ensure apply points at the line and column of a mistake in the file,
// and refuses a borrowLimit AWS would not take in the API's words.
func TestApplyErrorPositions(t *testing.T) {
	s := newServer(t, false)
	good, err := os.ReadFile(announcement)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, c := range []struct{ old, new string }{
		{"serviceEnvironments:\n", "  bad: [\nserviceEnvironments:\n"},
		{"maxCapacity: 3}", "maxCapacity: three}"},
		{"borrowLimit: 200}", "borrowLimit: 2147483648}"},
	} {
		file := filepath.Join(t.TempDir(), "cluster.yaml")
		if err := os.WriteFile(file, []byte(strings.Replace(string(good), c.old, c.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := s.run(Apply, "-f", file, "--dry-run")
		expect(t, r, ExitUsage, "")
		got.WriteString(strings.ReplaceAll(r.stderr, file, "cluster.yaml"))
	}
	golden(t, "apply_error_positions", got.String())
}

// Ensure the local executor's server refuses, at submission, a job whose
// command does not exist, with a ClientException that says so; a command
// it cannot judge (a relative path) is accepted and fails when it starts.
func TestSubmitMissingCommand(t *testing.T) {
	s := newServer(t, true)
	s.ok(Apply, "-f", announcement)
	var got strings.Builder
	for _, args := range [][]string{
		{"--share", "QS1", "--", "pyhton3", "train.py"},
		{"--share", "QS1", "--", "/opt/nowhere/train"},
		{"--share", "QS1", "--dry-run", "--", "pyhton3", "train.py"},
		{"--share", "QS1", "--env", "PATH=/nonexistent", "--", "sh", "-c", "true"},
	} {
		r := s.run(Submit, args...)
		expect(t, r, ExitFailure, "is not an executable file")
		got.WriteString(r.stderr)
	}
	golden(t, "submit_missing_command", got.String())
	// In AWS's shape: a 400 ClientException.
	body := `{"jobName":"j","jobQueue":"my-sm-training-qm-jq","serviceJobType":"SAGEMAKER_TRAINING","quotaShareName":"QS1",` +
		`"serviceRequestPayload":"{\"ResourceConfig\":{\"InstanceType\":\"ml.g5.xlarge\",\"InstanceCount\":1},` +
		`\"AlgorithmSpecification\":{\"ContainerEntrypoint\":[\"pyhton3\"]}}"}`
	resp, err := http.Post(s.url+"/v1/submitservicejob", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-Errortype") != "ClientException" || !strings.Contains(string(b), `"pyhton3\" is not an executable file`) {
		t.Errorf("%d %v %s", resp.StatusCode, resp.Header, b)
	}
	if out := s.ok(Jobs, "--status", "all"); !strings.HasPrefix(out, "no jobs") {
		t.Errorf("a refused submission left a job:\n%s", out)
	}
	s.ok(Submit, "--share", "QS1", "--name", "rel", "--", "./nowhere/train")
	s.waitStatus(jobID(1), "FAILED")
}
