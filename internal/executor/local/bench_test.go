package local

import (
	"flag"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// BenchmarkSleep runs b.N attempts of "sleep 0.2", end to end (Start to
// the terminal update), 120 at a time and one at a time. It reports
// attempts/s, the per-attempt overhead (latency beyond the 0.2 s sleep; at
// 120 it includes waiting for the CPU) and the CPU time per attempt of the
// executor and of what it supervises (supervisor and job processes).
func BenchmarkSleep(b *testing.B) {
	for _, c := range []int{120, 1} {
		b.Run("concurrent="+strconv.Itoa(c), func(b *testing.B) { benchSleep(b, c) })
	}
}

// supervisorBin runs the benchmark with another binary (the sharq binary)
// as the supervisor instead of this test binary.
var supervisorBin = flag.String("supervisor", "", "binary to run as `sharq "+SupervisorArg+"` in benchmarks")

func benchSleep(b *testing.B, concurrency int) {
	const sleep = 200 * time.Millisecond
	var opts Options
	if *supervisorBin != "" {
		opts.SupervisorCommand = []string{*supervisorBin, SupervisorArg}
	}
	h := newHarness(b, opts)
	payload := job{Entrypoint: []string{"sleep", "0.2"}}.payload()

	var mu sync.Mutex
	startedAt := make(map[string]time.Time, b.N)
	runningAt := make(map[string]time.Time, b.N)
	// latency is Start to the terminal update's receipt; start is Start to
	// Running, reap is the end of the sleep to the recorded end, notify is
	// the recorded end to the receipt of its update.
	var latency, start, reap, notify time.Duration
	failed := 0
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	h.mu.Lock()
	h.onUpdate = func(u executor.Update) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if u.State == executor.Running {
			runningAt[u.AttemptID] = u.At
			start += u.At.Sub(startedAt[u.AttemptID])
		}
		if !u.State.Terminal() {
			return
		}
		latency += now.Sub(startedAt[u.AttemptID])
		reap += u.At.Sub(runningAt[u.AttemptID]) - sleep
		notify += now.Sub(u.At)
		if u.State != executor.Succeeded {
			failed++
		}
		<-slots
		wg.Done()
	}
	h.mu.Unlock()

	self0, kids0 := cpuTime()
	b.ResetTimer()
	begin := time.Now()
	for i := range b.N {
		slots <- struct{}{}
		id := "bench-" + strconv.Itoa(i)
		mu.Lock()
		startedAt[id] = time.Now()
		mu.Unlock()
		wg.Add(1)
		if err := h.e.Start(b.Context(), executor.Attempt{ID: id, JobID: id, Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()
	if failed > 0 {
		b.Fatalf("%d of %d attempts did not succeed", failed, b.N)
	}
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "attempts/s")
	ms := func(d time.Duration) float64 { return float64(d) / n / 1e6 }
	b.ReportMetric(ms(latency-time.Duration(b.N)*sleep), "overhead-ms/attempt")
	b.ReportMetric(ms(start), "start-ms/attempt")
	b.ReportMetric(ms(reap), "reap-ms/attempt")
	b.ReportMetric(ms(notify), "notify-ms/attempt")
	// Supervisors are reaped asynchronously; give the last ones a moment
	// so their CPU time is counted.
	time.Sleep(300 * time.Millisecond)
	self, kids := cpuTime()
	b.ReportMetric(float64(self-self0)/n/1e6, "executor-cpu-ms/attempt")
	b.ReportMetric(float64(kids-kids0)/n/1e6, "supervised-cpu-ms/attempt")
}

// cpuTime is the user and system time of this process, and of its reaped
// descendants (supervisors and jobs).
func cpuTime() (self, kids time.Duration) {
	var s, k syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &k)
	d := func(r syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	return d(s), d(k)
}
