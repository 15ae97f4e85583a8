// Package heappeak measures the most heap a piece of work holds, for tests
// that bound the memory of a path that should stream.
package heappeak

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Start collects garbage, then samples the heap in use every few
// milliseconds until stop is called; stop returns the most it saw.
func Start() (stop func() uint64) {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	wg.Go(func() {
		for {
			sample()
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	var once sync.Once
	return func() uint64 {
		// The last sample counts what is still held at the end.
		once.Do(func() { close(done); wg.Wait(); sample() })
		return peak.Load()
	}
}
