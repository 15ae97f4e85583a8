package e2e

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/sharq-dev/sharq/internal/testwait"
)

var (
	benchJobs       = flag.Int("local-bench-jobs", 0, "run TestLocalThroughput with this many `sleep 0.2` jobs (0: skip it)")
	benchCapacity   = flag.Int("local-bench-capacity", 120, "TestLocalThroughput: instances of the service environment")
	benchSubmitters = flag.Int("local-bench-submitters", 16, "TestLocalThroughput: concurrent SubmitServiceJob clients")
	benchServeArgs  = flag.String("local-bench-serve-args", "", "TestLocalThroughput: more `sharq serve` flags, space-separated")
)

// TestLocalThroughput is the local executor's end-to-end benchmark: N jobs
// of `sleep 0.2` (one instance each) submitted over the API to one quota
// share of a service environment of 120 instances, each run as real
// processes, timed from the first submission to the last completion (the
// largest stoppedAt). First, in the same run, it times the machine's
// ceiling: the same N `sleep 0.2` started with os/exec, 120 at a time,
// with nothing else. It runs only when -local-bench-jobs is set:
//
//	go test ./e2e -run TestLocalThroughput -v -timeout 40m -local-bench-jobs 10000
func TestLocalThroughput(t *testing.T) {
	if *benchJobs <= 0 {
		t.Skip("a benchmark: run it with -local-bench-jobs N")
	}
	if raceEnabled {
		t.Skip("a benchmark: run it without -race")
	}
	n, capacity := *benchJobs, *benchCapacity
	bare := bareSleeps(t, n, capacity)
	args := append([]string{"--stop-grace", "5s"}, strings.Fields(*benchServeArgs)...)
	s := startLocal(t, "", args...)
	c := batch.New(batch.Options{
		Region: region, BaseEndpoint: aws.String(s.url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		HTTPClient:  ownBodies{&http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *benchSubmitters}}},
	})
	setUpBench(t, c, capacity)

	payload, _ := json.Marshal(map[string]any{
		"AlgorithmSpecification": map[string]any{"TrainingInputMode": "File", "ContainerEntrypoint": []string{"sleep"}, "ContainerArguments": []string{"0.2"}},
		"ResourceConfig":         map[string]any{"InstanceType": g5, "InstanceCount": 1, "VolumeSizeInGB": 10},
		"StoppingCondition":      map[string]any{"MaxRuntimeInSeconds": 3600},
		"Environment":            map[string]string{markEnv: s.mark + "/bench"},
	})
	load0 := loadAverage()
	cpu0 := processCPU(t, s.cmd.Process.Pid)
	cycles0 := cycleStats(t, s.url)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *benchSubmitters)
	latencies := make([][]time.Duration, *benchSubmitters)
	for w := range *benchSubmitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				sent := time.Now()
				_, err := c.SubmitServiceJob(ctx(t), &batch.SubmitServiceJobInput{JobName: aws.String(fmt.Sprintf("sleep-%d", i)),
					JobQueue: aws.String("bench-jq"), QuotaShareName: aws.String("bench"), ServiceJobType: types.ServiceJobTypeSagemakerTraining,
					ServiceRequestPayload: aws.String(string(payload)), SchedulingPriority: aws.Int32(1)})
				if err != nil {
					errs <- fmt.Errorf("SubmitServiceJob %d: %w", i, err)
					return
				}
				latencies[w] = append(latencies[w], time.Since(sent))
			}
		}()
	}
	wg.Wait()
	submitted := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}

	var peakLoad float64
	var ended int
	deadline := time.Now().Add(time.Duration(n)*200*time.Millisecond + 10*time.Minute)
	for ended < n {
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d of %d jobs have ended", time.Since(start).Round(time.Second), ended, n)
		}
		// A sample every 250 ms, not testwait's pace: each /metrics read
		// costs the server CPU this test measures.
		time.Sleep(250 * time.Millisecond)
		counts := jobCounts(t, s.url)
		if counts["FAILED"] > 0 {
			t.Fatalf("%d jobs FAILED; want every `sleep 0.2` to succeed", counts["FAILED"])
		}
		ended = counts["SUCCEEDED"]
		peakLoad = max(peakLoad, loadAverage()[0])
	}
	observed := time.Since(start)
	cpu1 := processCPU(t, s.cmd.Process.Pid)
	cycles1 := cycleStats(t, s.url)
	// The server started the supervisor during the run; it runs on.
	sup := processCPU(t, s.supervisor(t))

	// The last completion, from the jobs' stoppedAt.
	last := lastStoppedAt(t, s.client(), n)
	elapsed := time.UnixMilli(last).Sub(start)
	if elapsed <= 0 || elapsed > observed {
		elapsed = observed
	}
	load1 := loadAverage()
	t.Logf("%d jobs of sleep 0.2 on %d instances, %d submitters, serve %s", n, capacity, *benchSubmitters, strings.Join(args, " "))
	rate := float64(n) / elapsed.Seconds()
	t.Logf("end to end: %v, %.1f jobs/s (submissions took %v, %.0f/s)", elapsed.Round(time.Millisecond), rate,
		submitted.Round(time.Millisecond), float64(n)/submitted.Seconds())
	t.Logf("bare os/exec of the same %d sleep 0.2, %d at a time: %v, %.1f/s (%.1f ms CPU each); sharq reached %.0f %% of it",
		n, capacity, bare.elapsed.Round(time.Millisecond), bare.rate(), 1000*bare.cpu/float64(n), 100*rate/bare.rate())
	all := slices.Concat(latencies...)
	ncycles := cycles1.count - cycles0.count
	t.Logf("a submission's answer: p50 %v, p99 %v; the server's cycles: %.0f, %.1f ms each on average",
		percentile(all, 0.5), percentile(all, 0.99),
		ncycles, 1000*(cycles1.seconds-cycles0.seconds)/max(ncycles, 1))
	perJob := func(sec float64) float64 { return 1000 * sec / float64(n) }
	t.Logf("CPU per job: server %.1f ms, supervisor %.1f ms, jobs %.1f ms (server's other children %.1f ms)",
		perJob(cpu1.self-cpu0.self), perJob(sup.self), perJob(sup.children), perJob(cpu1.children-cpu0.children))
	t.Logf("machine: %d CPUs; load average before %.2f %.2f %.2f, after %.2f %.2f %.2f, peak 1-min %.2f",
		runtime.NumCPU(), load0[0], load0[1], load0[2], load1[0], load1[1], load1[2], peakLoad)
	s.waitNoProcesses(t, time.Minute)
	s.stop()
}

// bareRun is how long N sleeps took with nothing but os/exec, and their
// CPU time in seconds.
type bareRun struct {
	n       int
	elapsed time.Duration
	cpu     float64
}

func (b bareRun) rate() float64 { return float64(b.n) / b.elapsed.Seconds() }

// bareSleeps runs n `sleep 0.2` with os/exec, concurrency at a time: the
// ceiling of process creation on this machine for the benchmark's jobs.
func bareSleeps(t *testing.T, n, concurrency int) bareRun {
	t.Helper()
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var failed atomic.Int64
	start := time.Now()
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
	elapsed := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
	if failed.Load() > 0 {
		t.Fatalf("%d of %d bare sleeps failed", failed.Load(), n)
	}
	cpu := func(r syscall.Rusage) float64 { return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e9 }
	return bareRun{n: n, elapsed: elapsed, cpu: cpu(ru1) - cpu(ru0)}
}

// lastStoppedAt waits until ListServiceJobs lists the n jobs of bench-jq
// SUCCEEDED and returns their largest stoppedAt. NB: sharq_jobs in /metrics
// counts the jobs in the engine's memory, while ListServiceJobs reads the
// store, which the cycle that ended the last job may not have committed yet.
func lastStoppedAt(t *testing.T, c *batch.Client, n int) int64 {
	t.Helper()
	var last int64
	testwait.Until(t, 30*time.Second, func() error {
		last = 0
		count := 0
		pages := batch.NewListServiceJobsPaginator(c, &batch.ListServiceJobsInput{JobQueue: aws.String("bench-jq"),
			JobStatus: types.ServiceJobStatusSucceeded, MaxResults: aws.Int32(100)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx(t))
			fatalIf(t, "ListServiceJobs", err)
			for _, j := range page.JobSummaryList {
				last = max(last, aws.ToInt64(j.StoppedAt))
				count++
			}
		}
		if count != n {
			return notYet("ListServiceJobs lists %d SUCCEEDED jobs, want %d", count, n)
		}
		return nil
	})
	return last
}

// setUpBench creates a service environment of capacity ml.g5.xlarge and a
// job queue bench-jq with one quota share, bench, that may use all of it.
func setUpBench(t *testing.T, c *batch.Client, capacity int) {
	t.Helper()
	p, err := c.CreateSchedulingPolicy(ctx(t), &batch.CreateSchedulingPolicyInput{Name: aws.String("bench-qm"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo}})
	fatalIf(t, "CreateSchedulingPolicy", err)
	_, err = c.CreateServiceEnvironment(ctx(t), &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("bench-se"),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining,
		CapacityLimits:         []types.CapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(int32(capacity))}}})
	fatalIf(t, "CreateServiceEnvironment", err)
	_, err = c.CreateJobQueue(ctx(t), &batch.CreateJobQueueInput{JobQueueName: aws.String("bench-jq"), Priority: aws.Int32(1),
		JobQueueType: types.JobQueueTypeSagemakerTraining, SchedulingPolicyArn: p.Arn,
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("bench-se")}}})
	fatalIf(t, "CreateJobQueue", err)
	_, err = c.CreateQuotaShare(ctx(t), &batch.CreateQuotaShareInput{QuotaShareName: aws.String("bench"), JobQueue: aws.String("bench-jq"),
		CapacityLimits:               []types.QuotaShareCapacityLimit{{CapacityUnit: aws.String(g5), MaxCapacity: aws.Int32(int32(capacity))}},
		ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyReserve},
		PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionStateDisabled}})
	fatalIf(t, "CreateQuotaShare", err)
}

// jobCounts reads sharq_jobs{status} from the server's /metrics.
func jobCounts(t *testing.T, url string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for labels, v := range metric(t, url, "sharq_jobs") {
		counts[strings.TrimSuffix(strings.TrimPrefix(labels, `status="`), `"`)] = int(v)
	}
	return counts
}

// metric reads one metric from the server's /metrics: its values by their
// labels as written (`status="RUNNING"`; "" for a metric without labels).
func metric(t *testing.T, url, name string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if value, ok := strings.CutPrefix(line, name+" "); ok {
			if v, err := strconv.ParseFloat(value, 64); err == nil {
				out[""] = v
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if v, err := strconv.ParseFloat(value, 64); ok && err == nil {
			out[labels] = v
		}
	}
	return out
}

// cycles is how many scheduling cycles a server has run, and their time.
type cycles struct{ count, seconds float64 }

func cycleStats(t *testing.T, url string) cycles {
	t.Helper()
	return cycles{count: metric(t, url, "sharq_cycle_duration_seconds_count")[""],
		seconds: metric(t, url, "sharq_cycle_duration_seconds_sum")[""]}
}

func loadAverage() [3]float64 {
	var l [3]float64
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// cpuTimes is a process's CPU time and that of its waited-for children, in
// seconds.
type cpuTimes struct{ self, children float64 }

func processCPU(t *testing.T, pid int) cpuTimes {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU time of the server: %v", err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// Fields 14-17 of stat (utime, stime, cutime, cstime), in clock ticks
	// of 1/100 s on Linux.
	tick := func(i int) float64 { v, _ := strconv.ParseFloat(f[i-3], 64); return v / 100 }
	return cpuTimes{self: tick(14) + tick(15), children: tick(16) + tick(17)}
}
