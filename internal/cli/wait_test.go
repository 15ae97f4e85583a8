package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/sharq-dev/sharq/internal/testwait"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ensure wait exits 0 for a job that succeeds and 1 for one that fails,
// printing a line per change when stdout is not a terminal.
func TestWait(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--name", "good", "--env", "SHARQ_SIMULATED_RUNTIME_MS=30", "--", "train")
	r := s.run(Wait, "good")
	expect(t, r, ExitOK, "")
	if !strings.HasSuffix(r.stdout, "good (00000001) SUCCEEDED after 0s\n") {
		t.Errorf("stdout %q", r.stdout)
	}

	s.ok(Submit, "--share", "QS2", "--name", "bad", "--env", "SHARQ_SIMULATED_RUNTIME_MS=30", "--env", "SHARQ_SIMULATED_EXIT_CODE=2", "--", "train")
	r = s.run(Wait, jobID(2))
	expect(t, r, ExitFailure, "")
	if !strings.Contains(r.stdout, "bad (00000002) FAILED after 0s: ") || r.stderr != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = s.run(Wait, "bad", "-o", "json")
	var j struct{ Status, JobID string }
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Status != "FAILED" || r.code != ExitFailure {
		t.Errorf("wait -o json: exit %d, %+v, %v", r.code, j, err)
	}

	s.ok(Submit, "--share", "QS3", "--name", "forever", "--", "train")
	expect(t, s.run(Wait, "forever", "--timeout", "100ms"), ExitFailure, "gave up after 100ms: forever is")
	expect(t, s.run(Wait, "nosuch"), ExitNotFound, "no job has the ID or name nosuch")
}

// lockedBuffer is a buffer written by a verb running in another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Ensure events -f prints changes as they happen and ends cleanly when
// interrupted.
func TestEventsFollow(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	s.ok(Submit, "--share", "QS1", "--name", "before", "--env", "SHARQ_SIMULATED_RUNTIME_MS=10", "--", "train")
	s.waitStatus(jobID(1), "SUCCEEDED")

	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut lockedBuffer
	done := make(chan int)
	go func() {
		done <- Events(ctx, []string{"--endpoint", s.url, "-f", "--share", "QS2", "-o", "json"}, &out, &errOut)
	}()
	s.ok(Submit, "--share", "QS2", "--name", "after", "--env", "SHARQ_SIMULATED_RUNTIME_MS=10", "--", "train")
	testwait.True(t, 15*time.Second, "the followed job's end", func() bool { return strings.Contains(out.String(), `"status":"SUCCEEDED"`) })
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("events -f exit %d: %s", code, errOut.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct {
			Detail struct{ JobName, QuotaShareName string }
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Detail.JobName != "after" || ev.Detail.QuotaShareName != "QS2" {
			t.Errorf("line %q: %v (only QS2's job was asked for)", l, err)
		}
	}
	table := s.ok(Events, "--share", "QS1")
	if !strings.HasPrefix(table, "TIME ") || !strings.Contains(table, "before") || strings.Contains(table, "after") {
		t.Errorf("events table:\n%s", table)
	}
}

// Ensure top's live view draws on the alternate screen, fits the terminal
// and quits on q.
func TestTopLive(t *testing.T) {
	s := newServer(t, false)
	s.ok(Apply, "-f", announcement)
	c, err := (&connFlags{endpoint: s.url}).dial(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	scr := &topScreen{c: c, endpoint: s.url}
	var out bytes.Buffer
	// The reader gives q at once: one frame is drawn, then top quits.
	err = scr.live(t.Context(), strings.NewReader("q"), &out, time.Hour, func() (int, int) { return 40, 6 })
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, escAltScreen+escHome+"sharq top") || !strings.HasSuffix(got, escEraseBelow+escMainScreen) {
		t.Errorf("screen codes missing: %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, escAltScreen+escHome), escEraseBelow+escMainScreen), "\n")
	if len(lines) != 6 || lines[4] != "…"+escEraseLine {
		t.Errorf("frame not cut to 6 lines of a 6-line terminal: %q", lines)
	}
	for _, l := range lines {
		if n := len([]rune(strings.TrimSuffix(l, escEraseLine))); n > 40 {
			t.Errorf("line of %d runes on a 40-column terminal: %q", n, l)
		}
	}
}
