package engine_test

import (
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/engine"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// TestReadWaitsCounted checks that a read is counted, and that one that
// finds the lock held by a cycle is counted as waiting, with the time it
// waited. (Whether a read finds the lock free depends on the engine's own
// cycles, which run as they please.)
func TestReadWaitsCounted(t *testing.T) {
	e := startEngine(t, t.TempDir()).e
	before := e.ReadWaits()
	e.StatusCounts()
	free := e.ReadWaits()
	if free.Reads != before.Reads+1 {
		t.Fatalf("a read: %+v, then %+v", before, free)
	}
	release := engine.HoldLock(e)
	done := make(chan struct{})
	go func() {
		e.StatusCounts()
		close(done)
	}()
	// The read is counted before it tries the lock, which is held until
	// release: so from here it must wait.
	testwait.True(t, 10*time.Second, "the read to be counted", func() bool { return e.ReadWaits().Reads != free.Reads })
	time.Sleep(5 * time.Millisecond) // a wait long enough to be measured
	release()
	<-done
	after := e.ReadWaits()
	if after.Reads != free.Reads+1 || after.Waited != free.Waited+1 || after.Wait <= free.Wait {
		t.Fatalf("a read behind a held lock: %+v, then %+v", free, after)
	}
}
