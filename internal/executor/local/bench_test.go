package local

import (
	"flag"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// BenchmarkSleep runs b.N attempts of "sleep 0.2", end to end (Start to
// the terminal update), 120 at a time and one at a time. It reports
// attempts/s, the per-attempt overhead (latency beyond the 0.2 s sleep; at
// 120 it includes waiting for the CPU) and the CPU time per attempt of the
// executor and of what it supervises (the supervisor and the jobs). Before
// that, in the same run, it times the machine's ceiling: the same b.N
// `sleep 0.2` started with os/exec, as many at a time, with nothing else
// (bare-attempts/s; of-bare is attempts/s over it).
func BenchmarkSleep(b *testing.B) {
	for _, c := range []int{120, 1} {
		b.Run("concurrent="+strconv.Itoa(c), func(b *testing.B) { benchSleep(b, c) })
	}
}

// supervisorBin runs the benchmark with another binary (the sharq binary)
// as the supervisor instead of this test binary.
var supervisorBin = flag.String("supervisor", "", "binary to run as `sharq "+SupervisorArg+"` in benchmarks")

// noMountNS runs the benchmark's attempts without their mount namespaces,
// to tell what the namespace costs.
var noMountNS = flag.Bool("no-mount-namespace", false, "run the benchmark's attempts without mount namespaces")

// bareSleeps runs n `sleep 0.2` with os/exec, concurrency at a time, and
// returns the rate and the CPU time of each sleep process.
func bareSleeps(b *testing.B, n, concurrency int) (perSecond float64, cpu time.Duration) {
	path, err := exec.LookPath("sleep")
	if err != nil {
		b.Fatal(err)
	}
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var failed atomic.Int64
	_, kids0 := cpuTime()
	begin := time.Now()
	for range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := exec.Command(path, "0.2").Run(); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	_, kids := cpuTime()
	if failed.Load() > 0 {
		b.Fatalf("%d bare sleeps failed", failed.Load())
	}
	return float64(n) / elapsed.Seconds(), (kids - kids0) / time.Duration(n)
}

func benchSleep(b *testing.B, concurrency int) {
	const sleep = 200 * time.Millisecond
	bare, bareCPU := bareSleeps(b, b.N, concurrency)
	opts := Options{NoMountNamespace: *noMountNS}
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
	b.ReportMetric(bare, "bare-attempts/s")
	b.ReportMetric(n/elapsed.Seconds()/bare, "of-bare")
	ms := func(d time.Duration) float64 { return float64(d) / n / 1e6 }
	b.ReportMetric(ms(latency-time.Duration(b.N)*sleep), "overhead-ms/attempt")
	b.ReportMetric(ms(start), "start-ms/attempt")
	b.ReportMetric(ms(reap), "reap-ms/attempt")
	b.ReportMetric(ms(notify), "notify-ms/attempt")
	// The supervisor exits once the executor is closed; reaped, its CPU
	// time and its jobs' count as this process's children's.
	h.e.Close()
	h.waitSupervisorsReaped()
	self, kids := cpuTime()
	b.ReportMetric(float64(self-self0)/n/1e6, "executor-cpu-ms/attempt")
	b.ReportMetric(float64(kids-kids0)/n/1e6, "supervised-cpu-ms/attempt")
	b.ReportMetric(float64(bareCPU)/1e6, "bare-cpu-ms/attempt")
}

// cpuTime is the user and system time of this process, and of its reaped
// descendants (the supervisor and its jobs).
func cpuTime() (self, kids time.Duration) {
	var s, k syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &k)
	d := func(r syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	return d(s), d(k)
}
