package heappeak_test

import (
	"runtime"
	"testing"

	"github.com/sharq-dev/sharq/internal/heappeak"
)

var held []byte

// Ensure the peak covers a buffer held for a while, and stop may be called
// again.
func TestStart(t *testing.T) {
	stop := heappeak.Start()
	held = make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.Gosched()
	peak := stop()
	held = nil
	if peak < 64<<20 {
		t.Errorf("peak %d MiB while 64 MiB was held", peak>>20)
	}
	if again := stop(); again != peak {
		t.Errorf("stop again gave %d, then %d", peak, again)
	}
}
