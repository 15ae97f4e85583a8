package testwait

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		err := poll(time.Second, func() error {
			calls++
			if calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Fatalf("poll = %v after %d calls, want nil after 3", err, calls)
		}
		if got := time.Since(start); got != 2*every {
			t.Errorf("waited %v, want %v", got, 2*every)
		}
	})
}

func TestPollGivesTheLastErrorAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		err := poll(100*time.Millisecond, func() error {
			calls++
			return fmt.Errorf("call %d", calls)
		})
		if err == nil || err.Error() != fmt.Sprintf("call %d", calls) {
			t.Fatalf("poll = %v, want the last call's error (call %d)", err, calls)
		}
		if got := time.Since(start); got <= 100*time.Millisecond || got > 100*time.Millisecond+every {
			t.Errorf("gave up after %v, want just past 100ms", got)
		}
	})
}

func TestUntilAndTruePassWhenTheConditionHolds(t *testing.T) {
	Until(t, time.Second, func() error { return nil })
	True(t, time.Second, "nothing", func() bool { return true })
}

// recorder is a testing.TB that keeps what Fatalf was given instead of
// stopping the test.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

func TestTrueNamesWhatDidNotHappen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		True(r, 50*time.Millisecond, "the job to start", func() bool { return false })
		if want := "after 50ms: timed out waiting for the job to start"; r.fatal != want {
			t.Errorf("Fatalf(%q), want %q", r.fatal, want)
		}
	})
}

func TestForReturnsWhatPollDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if err := For(time.Second, func() error { return nil }); err != nil {
			t.Errorf("For of a condition that holds = %v", err)
		}
		if err := For(50*time.Millisecond, func() error { return errors.New("never") }); err == nil || err.Error() != "never" {
			t.Errorf("For of a condition that never holds = %v, want its error", err)
		}
	})
}

func TestPollEveryAsksAtItsPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		err := pollEvery(time.Second, 100*time.Millisecond, func() error {
			calls++
			if calls < 4 {
				return errors.New("not yet")
			}
			return nil
		})
		if err != nil || calls != 4 {
			t.Fatalf("pollEvery = %v after %d calls, want nil after 4", err, calls)
		}
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("waited %v, want 300ms", got)
		}
	})
}
