package container

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

var containerBench = flag.Bool("container-bench", false, "measure the start overhead of RunArgv against a bare run")

// TestStartOverhead measures, when asked with -container-bench, how long a
// container that runs true takes from spawn to exit: bare (the fewest flags
// podman runs with here), through RunArgv as a host without a network, and
// through RunArgv on the attempt's network. The kinds alternate so that load
// falls on all alike. It prints the numbers and asserts nothing about them.
func TestStartOverhead(t *testing.T) {
	if !*containerBench {
		t.Skip("a measurement, not a test: run with -container-bench")
	}
	r := realPodman(t)
	ctx := context.Background()
	att := attempt(t, r)
	if err := r.CreateNetwork(ctx, att); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bare := append(r.argv("run", "--rm"), r.RunArgs...)
	bare = append(bare, pythonImage, "true")
	kinds := []string{"bare", "RunArgv", "RunArgv+network"}
	times := map[string][]time.Duration{}
	const runs = 10
	for i := range runs {
		for _, kind := range kinds {
			argv := bare
			if kind != "bare" {
				h := Host{Name: fmt.Sprintf("%s-%d", att, i), Hostname: "algo-1", Image: pythonImage,
					Entrypoint: []string{"true"}, Env: []string{"TRAINING_JOB_NAME=bench"},
					Mounts: []Mount{{Source: dir, Target: "/opt/ml"}}, Labels: map[string]string{LabelAttempt: att}}
				if kind == "RunArgv+network" {
					h.Network = att
				}
				var err error
				if argv, err = r.RunArgv(h); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", kind, err, out)
			}
			times[kind] = append(times[kind], time.Since(start))
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load before the report: %s", strings.TrimSpace(string(load)))
	for _, kind := range kinds {
		d := times[kind]
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		t.Logf("%-16s n=%d min=%v median=%v mean=%v max=%v", kind, len(d),
			d[0].Round(time.Millisecond), ((d[len(d)/2-1] + d[len(d)/2]) / 2).Round(time.Millisecond),
			(sum / time.Duration(len(d))).Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
}
