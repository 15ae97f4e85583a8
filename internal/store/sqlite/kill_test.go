package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/store"
)

// killChildEnv, when set to a database path, turns TestKill9 into the
// child: it commits until killed.
const killChildEnv = "SHARQ_SQLITE_KILL_CHILD"

// Ensure every commit acknowledged before a SIGKILL is in the database
// after it: a child process commits batches from several goroutines and
// prints each batch's key after Commit returns; the test kills it
// mid-run, reopens the file and looks for every key's jobs.
func TestKill9(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		runKillChild(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "sharq.db")
	acked := commitUntilKilled(t, path, 300)

	s := mustOpen(t, path)
	defer s.Close()
	var integrity string
	if err := s.readers.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity check = %q, err %v", integrity, err)
	}
	for _, key := range acked {
		for _, id := range killBatchIDs(key) {
			if _, err := s.Job(t.Context(), id); err != nil {
				t.Errorf("acknowledged job %s after kill -9: %v", id, err)
			}
		}
	}
	t.Logf("%d acknowledged batches survived kill -9", len(acked))
}

// commitUntilKilled starts the child on path, kills it with SIGKILL once it
// acknowledged at least n batches, and returns every key it acknowledged.
func commitUntilKilled(t *testing.T, path string, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()

	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		key, ok := strings.CutPrefix(sc.Text(), "ack ")
		if !ok {
			continue
		}
		acked = append(acked, key)
		if len(acked) == n {
			// NB: lines the child wrote before dying are still in the pipe
			// and are read below; they count as acknowledged too.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill child: %v", err)
			}
		}
	}
	err = cmd.Wait()
	if len(acked) < n {
		t.Fatalf("child acknowledged %d batches, want %d before the kill; exit: %v", len(acked), n, err)
	}
	return acked
}

// killBatchIDs returns the job IDs of the child's batch named key.
func killBatchIDs(key string) []string {
	return []string{key + "-a", key + "-b", key + "-c"}
}

// runKillChild commits three-job batches from eight goroutines until the
// process is killed, printing "ack <key>" after each Commit returns.
func runKillChild(path string) {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("g%d-%06d", g, i)
				var b store.Batch
				for _, id := range killBatchIDs(key) {
					b.Jobs = append(b.Jobs, store.Job{ID: id, Name: id, Queue: "q", Status: "SUBMITTED",
						CreatedAt: time.Now().UnixMilli(), Doc: []byte(strings.Repeat("x", 500))})
				}
				if err := s.Commit(context.Background(), &b); err != nil {
					fmt.Fprintln(os.Stderr, "child commit:", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, "ack", key)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
