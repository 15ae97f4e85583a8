package local

import (
	"testing"
	"time"
)

// Ensure the timeout is the shorter of the attempt's and the payload's.
func TestTimeoutChoice(t *testing.T) {
	tests := map[string]struct {
		attempt, want int64 // seconds
		maxRuntime    int64
	}{
		"None":        {0, 0, 0},
		"AttemptOnly": {5, 5, 0},
		"PayloadOnly": {0, 7, 7},
		"Shorter":     {5, 3, 3},
		"AttemptWins": {2, 2, 9},
	}
	for name, tc := range tests {
		if got := timeout(secs(tc.attempt), tc.maxRuntime); got != secs(tc.want) {
			t.Errorf("%s: got %s, want %ds", name, got, tc.want)
		}
	}
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
