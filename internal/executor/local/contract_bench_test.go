package local

import (
	"flag"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sharq-dev/sharq/internal/container/containertest"
	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// contractBench runs the contract's measurements, which take minutes and
// a quiet machine: go test -run 'TestBench' -contract-bench -v.
var contractBench = flag.Bool("contract-bench", false, "run the SageMaker contract's measurements")

func needBench(t *testing.T) {
	if !*contractBench {
		t.Skip("a measurement: give -contract-bench")
	}
}

// TestBenchCachedStart times Start to Running of a job with a 1 GiB
// channel, as one object and as 1,000: its first attempt downloads it, its
// second (after a preemption) finds it in the cache.
func TestBenchCachedStart(t *testing.T) {
	needBench(t)
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	const size = 1 << 30
	one := strings.Repeat("x", size)
	if _, err := h.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(h.bucket), Key: aws.String("one/blob"), Body: strings.NewReader(one)}); err != nil {
		t.Fatal(err)
	}
	part := one[:size/1000]
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range 1000 {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			h.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(fmt.Sprintf("many/%04d", i)), Body: strings.NewReader(part)})
		})
	}
	wg.Wait()
	for _, prefix := range []string{"one", "many"} {
		j := sh(`true`)
		j.Channels = map[string]string{"train": "s3://jobs/" + prefix}
		for _, attempt := range []string{"first", "second"} {
			id := prefix + "-" + attempt
			begin := time.Now()
			h.start(attemptOf(id, "job-"+prefix, j))
			h.awaitWithin(id, executor.Running, 10*time.Minute)
			t.Logf("%s, %s attempt: Start to Running %s", prefix, attempt, time.Since(begin).Round(time.Millisecond))
			h.awaitWithin(id, executor.Succeeded, time.Minute)
		}
	}
}

// TestBenchContainerSleeps runs n `sleep 0.2` training images through the
// executor, all at once, against the same number of bare `podman run`s of
// the same image in the same run: podman's own ceiling here.
func TestBenchContainerSleeps(t *testing.T) {
	needBench(t)
	h, rt := containerHarness(t, Options{})
	const n = 20
	bare := func() time.Duration {
		begin := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				args := append(append([]string{}, rt.ExtraArgs...), "run", "--rm", "--name", fmt.Sprintf("sharq-bench-bare-%d", i))
				args = append(append(args, rt.RunArgs...), containertest.PythonImage, "sleep", "0.2")
				if out, err := exec.Command(rt.Path, args...).CombinedOutput(); err != nil {
					t.Errorf("podman run: %v: %s", err, out)
				}
			})
		}
		wg.Wait()
		return time.Since(begin)
	}
	round := 0
	viaExecutor := func() time.Duration {
		round++
		begin := time.Now()
		var ids []string
		for i := range n {
			id := fmt.Sprintf("s%d-%d", round, i)
			ids = append(ids, id)
			h.start(attemptOf(id, id, job{Image: containertest.PythonImage, Entrypoint: []string{"sleep", "0.2"}}))
		}
		for _, id := range ids {
			h.await(id, executor.Succeeded)
		}
		return time.Since(begin)
	}
	var b, e []time.Duration
	for range 3 {
		b = append(b, bare())
		e = append(e, viaExecutor())
	}
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	sort.Slice(e, func(i, j int) bool { return e[i] < e[j] })
	t.Logf("%d containers of sleep 0.2 at once: bare podman run %v (median %v, %.1f/s), through the executor %v (median %v, %.1f/s), ratio %.2f",
		n, b, b[1], float64(n)/b[1].Seconds(), e, e[1], float64(n)/e[1].Seconds(), e[1].Seconds()/b[1].Seconds())
}
