package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/sharqapi"
	"github.com/sharq-dev/sharq/internal/testwait"
)

var (
	kubeScale          = flag.Bool("kube-scale", false, "TestKubeScale at full size: 1,000 kwok nodes of 8 GPUs, 10,000 pods, 100 quota shares, 1,000 preemptions")
	kubeScaleNodes     = flag.Int("kube-scale-nodes", 0, "TestKubeScale: kwok nodes (default 30, or 1,000 with -kube-scale)")
	kubeScaleGPUs      = flag.Int("kube-scale-gpus", 8, "TestKubeScale: GPUs of each node")
	kubeScalePods      = flag.Int("kube-scale-pods", 0, "TestKubeScale: running pods, one job each (default 300, or 10,000 with -kube-scale)")
	kubeScaleShares    = flag.Int("kube-scale-shares", 0, "TestKubeScale: quota shares (default 10, or 100 with -kube-scale)")
	kubeScalePreempt   = flag.Int("kube-scale-preempt", 0, "TestKubeScale: pods preempted at once (default 30, or 1,000 with -kube-scale)")
	kubeScaleClients   = flag.Int("kube-scale-clients", 64, "TestKubeScale: sharq serve's --executor-workers, and the clients of the ceiling run")
	kubeScaleServeArgs = flag.String("kube-scale-serve-args", "", "TestKubeScale: more `sharq serve` flags, space-separated")
)

// scaleSize is what TestKubeScale runs.
type scaleSize struct {
	nodes, gpus, pods, shares, preempt int
}

func kubeScaleSize() scaleSize {
	s := scaleSize{nodes: 30, pods: 300, shares: 10, preempt: 30}
	if *kubeScale {
		s = scaleSize{nodes: 1000, pods: 10000, shares: 100, preempt: 1000}
	}
	s.gpus = *kubeScaleGPUs
	for _, f := range []struct {
		flag int
		to   *int
	}{{*kubeScaleNodes, &s.nodes}, {*kubeScalePods, &s.pods}, {*kubeScaleShares, &s.shares}, {*kubeScalePreempt, &s.preempt}} {
		if f.flag > 0 {
			*f.to = f.flag
		}
	}
	return s
}

const (
	scalePool  = "kubescale"
	scaleGPU   = "ml.g5.xlarge" // one GPU
	scaleCPU   = "ml.m5.xlarge" // no GPU
	scaleGrace = 3 * time.Second
)

// TestKubeScale is the kube executor's benchmark on the test cluster. It
// makes its own kwok nodes (instance type g5.48xlarge, 8 GPUs each),
// starts sharq serve --executor kube, and submits one single-instance job
// per pod, spread evenly over the quota shares of one queue, while the
// service environment is DISABLED; enabling it admits them all at once.
// Every node's GPUs take a one-GPU pod each (ml.g5.xlarge); the pods beyond
// them are CPU-only instances (ml.m5.xlarge), so that the full form holds
// 10,000 running pods on 8,000 GPUs. It prints:
//
//   - dispatch to pod created, p50 and p99: from the job's SCHEDULED event
//     to the pod's ADDED event seen by a watch of the test's;
//   - dispatch to RUNNING, p50 and p99: from SCHEDULED to RUNNING;
//   - jobs admitted per second, sustained: the middle 80 % of the SCHEDULED
//     events over the time they span;
//   - the API server's request rate from sharq while the pods came up,
//     from sharq's sharq_kube_api_requests_total;
//   - a preemption of P pods at once (P higher-priority jobs, P/shares in
//     each share, in-share): the time from their submission until the
//     victims' pods are gone, which ignore SIGTERM for the whole 3 s grace
//     period, and until the preemptors run, against the goal of the grace
//     period plus 5 s.
//
// Without flags it runs a bounded form (30 nodes, 300 pods, 10 shares, 30
// preemptions) that checks the harness works; the figures come from
//
//	go test ./e2e -run TestKubeScale -v -timeout 90m -kube-scale
//
// on a cluster of its own (.ci/kube/up), without -race.
func TestKubeScale(t *testing.T) {
	size := kubeScaleSize()
	if *kubeScale && raceEnabled {
		t.Fatal("the full benchmark runs without -race")
	}
	gpuPods := min(size.pods, size.nodes*size.gpus)
	cpuPods := size.pods - gpuPods
	if size.shares <= 0 || gpuPods%size.shares != 0 || cpuPods%size.shares != 0 || size.preempt%size.shares != 0 ||
		size.preempt/size.shares > gpuPods/size.shares {
		t.Fatalf("%+v: the %d GPU pods, %d CPU pods and %d preemptions must divide evenly among the %d shares, with no more preemptions than GPU pods",
			size, gpuPods, cpuPods, size.preempt, size.shares)
	}
	begin := time.Now()
	kc := kubetest.Kubeconfig(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // the nodes are made and deleted in parallel
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := kubetest.Namespace(t, cs, "")
	t.Cleanup(func() {
		// Many at once: kubetest's wipe deletes Services one by one, and
		// its deletion of all pods in one request runs out of time on
		// thousands.
		zero := int64(0)
		if l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{}); err == nil {
			parallel(16, l.Items, func(p corev1.Pod) error {
				return cs.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			})
		}
		if l, err := cs.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{}); err == nil {
			parallel(16, l.Items, func(s corev1.Service) error {
				return cs.CoreV1().Services(ns).Delete(context.Background(), s.Name, metav1.DeleteOptions{})
			})
		}
	})
	scaleNodes(t, cs, size.nodes, size.gpus)
	var specs []scaleJob
	for i := range size.shares {
		for j := range gpuPods / size.shares {
			specs = append(specs, scaleJob{name: fmt.Sprintf("gpu-%d-%d", i, j), share: shareName(i), typ: scaleGPU, priority: 1})
		}
		for j := range cpuPods / size.shares {
			specs = append(specs, scaleJob{name: fmt.Sprintf("cpu-%d-%d", i, j), share: shareName(i), typ: scaleCPU, priority: 1})
		}
	}
	// What this cluster does with the same pods and no sharq, first as
	// sharq makes them and then the pods alone.
	scaleCeiling(t, cs, ns, specs, *kubeScaleClients, true)
	scaleCeiling(t, cs, ns, specs, *kubeScaleClients, false)
	table := filepath.Join(t.TempDir(), "instance-types.yaml")
	if err := os.WriteFile(table, []byte(scaleTable()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig", kc, "--kube-instance", ns, "--kube-instance-types", table, "--kube-namespace", ns,
		"--stop-grace", scaleGrace.String(), "--executor-workers", strconv.Itoa(*kubeScaleClients), "--max-shares-per-queue", strconv.Itoa(max(size.shares, 20))}, strings.Fields(*kubeScaleServeArgs)...)
	s := startServer(t, serverOptions{executor: "kube", args: args})
	c := batch.New(batch.Options{
		Region: region, BaseEndpoint: aws.String(s.url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		HTTPClient:  ownBodies{&http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}},
	})
	setUpScale(t, c, size, gpuPods, cpuPods)
	pods := watchScalePods(t, cs, ns)
	t.Logf("set up %d nodes of %d GPUs, %d shares in %v", size.nodes, size.gpus, size.shares, time.Since(begin).Round(time.Millisecond))

	// Submit every job while the environment is disabled, then admit them.
	submitted := time.Now()
	jobs := submitScale(t, c, specs)
	t.Logf("submitted %d jobs in %v (%.0f/s)", len(jobs), time.Since(submitted).Round(time.Millisecond), float64(len(jobs))/time.Since(submitted).Seconds())
	req0 := kubeRequests(t, s.url)
	enabled := time.Now()
	_, err = c.UpdateServiceEnvironment(ctx(t), &batch.UpdateServiceEnvironmentInput{ServiceEnvironment: aws.String("scale-se"),
		State: types.ServiceEnvironmentStateEnabled})
	fatalIf(t, "UpdateServiceEnvironment ENABLED", err)
	// kube-scheduler binds some tens of pods a second on a small machine.
	waitCounts(t, s.url, 5*time.Minute+time.Duration(size.pods)*200*time.Millisecond, map[string]int{"RUNNING": size.pods})
	upAfter := time.Since(enabled)
	req1 := kubeRequests(t, s.url)

	// Per job: dispatched (SCHEDULED), pod created, RUNNING.
	times := jobTimes(t, s.url, jobs)
	var toPod, toRunning []time.Duration
	var admitted, created, ran []time.Time
	for _, j := range jobs {
		jt := times[j]
		at, ok := pods.added(j)
		if jt.scheduled.IsZero() || jt.running.IsZero() || !ok {
			t.Fatalf("job %s: SCHEDULED at %v, RUNNING at %v, pod seen %v: want all three", j, jt.scheduled, jt.running, ok)
		}
		admitted, created, ran = append(admitted, jt.scheduled), append(created, at), append(ran, jt.running)
		toPod = append(toPod, at.Sub(jt.scheduled))
		toRunning = append(toRunning, jt.running.Sub(jt.scheduled))
	}
	t.Logf("%d pods (%d with a GPU) on %d nodes of %d GPUs, %d shares: all RUNNING %v after the environment was enabled",
		size.pods, gpuPods, size.nodes, size.gpus, size.shares, upAfter.Round(time.Millisecond))
	t.Logf("dispatch to pod created: p50 %v, p99 %v", percentile(toPod, 0.5), percentile(toPod, 0.99))
	t.Logf("dispatch to RUNNING: p50 %v, p99 %v", percentile(toRunning, 0.5), percentile(toRunning, 0.99))
	t.Logf("jobs admitted (SCHEDULED): %s", rate(enabled, admitted))
	t.Logf("pods created: %s", rate(enabled, created))
	t.Logf("jobs RUNNING: %s", rate(enabled, ran))
	t.Logf("API server requests from sharq until all ran: %.0f/s (%s)", sum(req1, req0)/upAfter.Seconds(), breakdown(req1, req0))

	// Preempt: P higher-priority GPU jobs, P/shares in each share.
	var preemptors []scaleJob
	for i := range size.shares {
		for j := range size.preempt / size.shares {
			preemptors = append(preemptors, scaleJob{name: fmt.Sprintf("urgent-%d-%d", i, j), share: shareName(i), typ: scaleGPU, priority: 9})
		}
	}
	req2 := kubeRequests(t, s.url)
	preempt := time.Now()
	urgent := submitScale(t, c, preemptors)
	waitCounts(t, s.url, 2*time.Minute+time.Duration(size.preempt)*100*time.Millisecond,
		map[string]int{"RUNNING": size.pods, "RUNNABLE": size.preempt})
	req3 := kubeRequests(t, s.url)
	gone, graces, lastAsked := pods.deletedAfter(preempt)
	if len(gone) != size.preempt {
		t.Fatalf("%d pods were deleted after the preemptors' submission, want %d", len(gone), size.preempt)
	}
	for name, g := range graces {
		if g != int64(scaleGrace.Seconds()) {
			t.Errorf("victim pod %s was deleted with a grace period of %d s, want %v", name, g, scaleGrace)
		}
	}
	lastGone := slices.MaxFunc(gone, func(a, b time.Time) int { return a.Compare(b) })
	var lastRunning time.Time
	for j, jt := range jobTimes(t, s.url, urgent) {
		if jt.running.IsZero() {
			t.Fatalf("preemptor %s is not RUNNING", j)
		}
		if jt.running.After(lastRunning) {
			lastRunning = jt.running
		}
	}
	t.Logf("preemption of %d pods (grace %v, goal %v): the last victim's deletion asked after %v, victims' pods gone after %v, preemptors RUNNING after %v; %.0f API requests/s (%s)",
		size.preempt, scaleGrace, scaleGrace+5*time.Second, lastAsked.Sub(preempt).Round(time.Millisecond), lastGone.Sub(preempt).Round(time.Millisecond),
		lastRunning.Sub(preempt).Round(time.Millisecond), sum(req3, req2)/time.Since(preempt).Seconds(), breakdown(req3, req2))
	s.stop()
	t.Logf("the run took %v", time.Since(begin).Round(time.Second))
}

func shareName(i int) string { return fmt.Sprintf("share-%03d", i) }

// scaleNodes makes the benchmark's kwok nodes, 16 at a time, and deletes
// them when the test ends.
func scaleNodes(t *testing.T, cs kubernetes.Interface, n, gpus int) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", scalePool, i)
	}
	t.Cleanup(func() {
		parallel(16, names, func(name string) error {
			err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	})
	err := parallel(16, names, func(name string) error {
		caps := corev1.ResourceList{"cpu": resource.MustParse("96"), "memory": resource.MustParse("768Gi"), "pods": resource.MustParse("110"),
			"nvidia.com/gpu": resource.MustParse(strconv.Itoa(gpus))}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": name,
					"node.kubernetes.io/instance-type": "g5.48xlarge", kubetest.PoolLabel: scalePool},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Capacity: caps, Allocatable: caps},
		}
		_, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("make nodes: %v", err)
	}
}

// scaleTable places both instance types on the benchmark's nodes.
func scaleTable() string {
	var b strings.Builder
	b.WriteString("types:\n")
	for typ, gpus := range map[string]int{scaleGPU: 1, scaleCPU: 0} {
		fmt.Fprintf(&b, "  %s:\n    gpus: %d\n    cpu: \"1\"\n    memory: 4Gi\n", typ, gpus)
		fmt.Fprintf(&b, "    nodeSelector: {node.kubernetes.io/instance-type: g5.48xlarge, %s: %s}\n", kubetest.PoolLabel, scalePool)
		b.WriteString("    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n")
	}
	return b.String()
}

// setUpScale creates a service environment of the cluster's GPU and CPU
// instances, DISABLED, and a queue whose shares each hold an equal part,
// with in-share preemption.
func setUpScale(t *testing.T, c *batch.Client, size scaleSize, gpuPods, cpuPods int) {
	t.Helper()
	limits := func(gpu, cpu int) []types.CapacityLimit {
		l := []types.CapacityLimit{{CapacityUnit: aws.String(scaleGPU), MaxCapacity: aws.Int32(int32(gpu))}}
		if cpu > 0 {
			l = append(l, types.CapacityLimit{CapacityUnit: aws.String(scaleCPU), MaxCapacity: aws.Int32(int32(cpu))})
		}
		return l
	}
	p, err := c.CreateSchedulingPolicy(ctx(t), &batch.CreateSchedulingPolicyInput{Name: aws.String("scale-qm"),
		QuotaSharePolicy: &types.QuotaSharePolicy{IdleResourceAssignmentStrategy: types.QuotaShareIdleResourceAssignmentStrategyFifo}})
	fatalIf(t, "CreateSchedulingPolicy", err)
	_, err = c.CreateServiceEnvironment(ctx(t), &batch.CreateServiceEnvironmentInput{ServiceEnvironmentName: aws.String("scale-se"),
		ServiceEnvironmentType: types.ServiceEnvironmentTypeSagemakerTraining, State: types.ServiceEnvironmentStateDisabled,
		CapacityLimits: limits(gpuPods, cpuPods)})
	fatalIf(t, "CreateServiceEnvironment", err)
	_, err = c.CreateJobQueue(ctx(t), &batch.CreateJobQueueInput{JobQueueName: aws.String("scale-jq"), Priority: aws.Int32(1),
		JobQueueType: types.JobQueueTypeSagemakerTraining, SchedulingPolicyArn: p.Arn,
		ServiceEnvironmentOrder: []types.ServiceEnvironmentOrder{{Order: aws.Int32(1), ServiceEnvironment: aws.String("scale-se")}}})
	fatalIf(t, "CreateJobQueue", err)
	for i := range size.shares {
		var shareLimits []types.QuotaShareCapacityLimit
		for _, l := range limits(gpuPods/size.shares, cpuPods/size.shares) {
			shareLimits = append(shareLimits, types.QuotaShareCapacityLimit{CapacityUnit: l.CapacityUnit, MaxCapacity: l.MaxCapacity})
		}
		_, err = c.CreateQuotaShare(ctx(t), &batch.CreateQuotaShareInput{QuotaShareName: aws.String(shareName(i)), JobQueue: aws.String("scale-jq"),
			CapacityLimits:               shareLimits,
			ResourceSharingConfiguration: &types.QuotaShareResourceSharingConfiguration{Strategy: types.QuotaShareResourceSharingStrategyReserve},
			PreemptionConfiguration:      &types.QuotaSharePreemptionConfiguration{InSharePreemption: types.QuotaShareInSharePreemptionStateEnabled}})
		fatalIf(t, "CreateQuotaShare "+shareName(i), err)
	}
}

// scaleJob is one job of the benchmark: one instance of typ that runs
// until it is deleted and then ignores SIGTERM for its whole grace period.
type scaleJob struct {
	name, share, typ string
	priority         int32
}

// submitScale submits the jobs from 16 clients and returns their IDs.
func submitScale(t *testing.T, c *batch.Client, jobs []scaleJob) []string {
	t.Helper()
	ids := make([]string, len(jobs))
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	err := parallel(16, idx, func(i int) error {
		j := jobs[i]
		b, _ := json.Marshal(map[string]any{
			"AlgorithmSpecification": map[string]any{"TrainingInputMode": "File", "TrainingImage": trainingImage},
			"ResourceConfig":         map[string]any{"InstanceType": j.typ, "InstanceCount": 1, "VolumeSizeInGB": 10},
			"Environment":            map[string]string{"KWOK_TERM": "ignore"},
		})
		out, err := c.SubmitServiceJob(ctx(t), &batch.SubmitServiceJobInput{JobName: aws.String(j.name), JobQueue: aws.String("scale-jq"),
			QuotaShareName: aws.String(j.share), ServiceJobType: types.ServiceJobTypeSagemakerTraining,
			ServiceRequestPayload: aws.String(string(b)), SchedulingPriority: aws.Int32(j.priority)})
		if err != nil {
			return fmt.Errorf("SubmitServiceJob %s: %w", j.name, err)
		}
		ids[i] = aws.ToString(out.JobId)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// parallel calls f on every item from n goroutines and returns the first
// error.
func parallel[T any](n int, items []T, f func(T) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(items)); i = next.Add(1) - 1 {
				if err := f(items[i]); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// waitCounts polls sharq_jobs{status} until it has the counts; a FAILED
// job ends the test.
func waitCounts(t *testing.T, url string, timeout time.Duration, want map[string]int) {
	t.Helper()
	// Each asking scrapes the server under measurement: ten a second.
	testwait.Paced(t, timeout, 100*time.Millisecond, func() error {
		counts := jobCounts(t, url)
		if counts["FAILED"] > 0 {
			t.Fatalf("%d jobs FAILED: %v", counts["FAILED"], counts)
		}
		for status, n := range want {
			if counts[status] != n {
				return fmt.Errorf("the jobs are %v, want %v", counts, want)
			}
		}
		return nil
	})
}

// jobTime is when a job was first SCHEDULED and first RUNNING.
type jobTime struct{ scheduled, running time.Time }

// jobTimes reads each job's events from sharq.
func jobTimes(t *testing.T, url string, jobs []string) map[string]jobTime {
	t.Helper()
	var mu sync.Mutex
	out := map[string]jobTime{}
	err := parallel(16, jobs, func(id string) error {
		resp, err := http.Get(url + "/sharq/v1/jobs/" + id + "/events")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var evs sharqapi.JobEvents
		if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
			return fmt.Errorf("events of %s: %d %w", id, resp.StatusCode, err)
		}
		var jt jobTime
		for _, ev := range evs.Events {
			at, err := time.Parse(time.RFC3339Nano, ev.Time)
			if err != nil {
				return err
			}
			switch ev.Detail.Status {
			case "SCHEDULED":
				jt.scheduled = at
			case "RUNNING":
				jt.running = at
			}
		}
		mu.Lock()
		out[id] = jt
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scalePods is what a watch saw of the benchmark's pods.
type scalePods struct {
	mu      sync.Mutex
	addedAt map[string]time.Time // by job ID: its first pod
	deleted map[string]time.Time // by pod name
	graces  map[string]int64     // by pod name: the grace period of its deletion
	asked   map[string]time.Time // by pod name: when its deletion was first seen asked for
	ended   bool
}

func watchScalePods(t *testing.T, cs kubernetes.Interface, ns string) *scalePods {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &scalePods{addedAt: map[string]time.Time{}, deleted: map[string]time.Time{}, graces: map[string]int64{}, asked: map[string]time.Time{}}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	opts := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=sharq"}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		defer func() {
			p.mu.Lock()
			p.ended = true
			p.mu.Unlock()
		}()
		// The API server ends a watch now and then (its timeout, a slow
		// reader under a burst of events): watch again from the last
		// version seen, or list again when that version is gone.
		for {
			rv := p.follow(w)
			if ctx.Err() != nil {
				return
			}
			if rv == "" {
				list, err := cs.CoreV1().Pods(ns).List(ctx, opts)
				if err != nil {
					return
				}
				p.listed(list.Items)
				rv = list.ResourceVersion
			}
			o := opts
			o.ResourceVersion = rv
			if w, err = cs.CoreV1().Pods(ns).Watch(ctx, o); err != nil {
				return
			}
		}
	}()
	return p
}

// follow records a watch's events until it ends, and returns the last
// resource version seen, or "" when the watch ended with an error.
func (p *scalePods) follow(w watch.Interface) string {
	defer w.Stop()
	rv := ""
	for ev := range w.ResultChan() {
		now := time.Now()
		if ev.Type == watch.Error {
			return ""
		}
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		rv = pod.ResourceVersion
		p.mu.Lock()
		switch ev.Type {
		case watch.Added:
			if _, seen := p.addedAt[pod.Labels["sharq.dev/job"]]; !seen {
				p.addedAt[pod.Labels["sharq.dev/job"]] = now
			}
		case watch.Deleted:
			p.deleted[pod.Name] = now
		}
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			if _, seen := p.graces[pod.Name]; !seen {
				p.graces[pod.Name], p.asked[pod.Name] = *g, now
			}
		}
		p.mu.Unlock()
	}
	return rv
}

// listed records pods a watch missed, as added when listed.
func (p *scalePods) listed(pods []corev1.Pod) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range pods {
		if _, seen := p.addedAt[pod.Labels["sharq.dev/job"]]; !seen {
			p.addedAt[pod.Labels["sharq.dev/job"]] = now
		}
	}
}

func (p *scalePods) added(job string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return time.Time{}, false
	}
	at, ok := p.addedAt[job]
	return at, ok
}

// deletedAfter lists when the pods deleted after since went, the grace
// periods they were deleted with, and when the last of those deletions
// was asked for (the API server's doing, and sharq's; the rest is the
// grace period and kwok's).
func (p *scalePods) deletedAfter(since time.Time) ([]time.Time, map[string]int64, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Time
	var lastAsked time.Time
	graces := map[string]int64{}
	for name, at := range p.deleted {
		if at.After(since) {
			out = append(out, at)
			graces[name] = p.graces[name]
			if a := p.asked[name]; a.After(lastAsked) {
				lastAsked = a
			}
		}
	}
	return out, graces, lastAsked
}

// kubeRequests reads sharq_kube_api_requests_total from sharq's /metrics,
// by its labels.
func kubeRequests(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out := metric(t, url, "sharq_kube_api_requests_total")
	if len(out) == 0 {
		t.Fatal("sharq's /metrics has no sharq_kube_api_requests_total")
	}
	return out
}

func sum(now, before map[string]float64) float64 {
	n := 0.0
	for k, v := range now {
		n += v - before[k]
	}
	return n
}

// breakdown lists the request counts between two readings, largest first.
func breakdown(now, before map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var l []kv
	for k, v := range now {
		if d := v - before[k]; d > 0 {
			l = append(l, kv{strings.ReplaceAll(k, `"`, ""), d})
		}
	}
	slices.SortFunc(l, func(a, b kv) int { return int(b.v - a.v) })
	var parts []string
	for _, e := range l {
		parts = append(parts, fmt.Sprintf("%.0f %s", e.v, e.k))
	}
	return strings.Join(parts, "; ")
}

// rate tells how fast events came after start: all of them, and the middle
// 80 % (sustained), when they are spread over time at all.
func rate(start time.Time, at []time.Time) string {
	s := slices.Clone(at)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	out := fmt.Sprintf("%d within a millisecond of the start", len(s))
	if all := s[len(s)-1].Sub(start); all >= time.Millisecond {
		out = fmt.Sprintf("%d in %v after the start, %.0f/s", len(s), all.Round(time.Millisecond), float64(len(s))/all.Seconds())
	}
	lo, hi := s[len(s)/10], s[len(s)*9/10]
	if d := hi.Sub(lo); d > 0 {
		out += fmt.Sprintf("; sustained %.0f/s (the middle 80 %% in %v)", float64(len(s)*8/10)/d.Seconds(), d.Round(time.Millisecond))
	} else {
		out += "; all in one instant"
	}
	return out
}

func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))].Round(time.Millisecond)
}
