// Package testwait waits, in tests, for something another goroutine or
// process brings about. It is the one polling loop the suites share, so a
// timeout reads the same everywhere and names what did not happen.
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// every is how often a condition is asked again: short enough that a test
// does not idle, long enough to leave the two cores to the work awaited.
const every = 5 * time.Millisecond

// Until asks cond every few milliseconds until it returns nil, and fails
// the test with cond's last error once timeout has passed. Inside a
// testing/synctest bubble the waits are on the bubble's clock.
func Until(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := poll(timeout, cond); err != nil {
		t.Fatalf("after %v: %v", timeout, err)
	}
}

// True is Until for a condition that is only true or false: it fails the
// test with "timed out waiting for WHAT".
func True(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Until(t, timeout, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("timed out waiting for %s", what)
	})
}

// For is Until for a caller with something to do before it fails (kill
// a process, say): it returns nil once cond does, or cond's last error
// after timeout.
func For(timeout time.Duration, cond func() error) error {
	return poll(timeout, cond)
}

// Paced is Until asking cond only every pace: for a condition whose asking
// loads the work awaited, such as a scrape of a server being measured.
func Paced(t testing.TB, timeout, pace time.Duration, cond func() error) {
	t.Helper()
	if err := pollEvery(timeout, pace, cond); err != nil {
		t.Fatalf("after %v: %v", timeout, err)
	}
}

// poll returns nil once cond does, or cond's last error after timeout;
// cond is always asked at least once, and once more after the deadline.
func poll(timeout time.Duration, cond func() error) error {
	return pollEvery(timeout, every, cond)
}

func pollEvery(timeout, pace time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pace)
	}
}
