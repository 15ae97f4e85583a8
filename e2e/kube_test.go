package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// kubeServer is sharq serve with the kube executor on the test cluster:
// the test's own node of 8 ml.g5.xlarge GPUs and its own namespaces
// (one per quota share: <test>-qs1, ...).
type kubeServer struct {
	*server
	cs     kubernetes.Interface
	prefix string
	args   []string // the flags it was started with
}

func startKube(t *testing.T, args ...string) *kubeServer {
	t.Helper()
	kc := kubetest.Kubeconfig(t)
	cs := kubetest.Client(t)
	pool := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	kubetest.Nodes(t, cs, pool, "g5.xlarge", 1, 8)
	dir := t.TempDir()
	table := filepath.Join(dir, "instance-types.yaml")
	if err := os.WriteFile(table, []byte(kubetest.Table(pool)), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := kubetest.Namespace(t, cs, "")
	for _, s := range walkthroughShares {
		kubetest.Namespace(t, cs, s.name)
	}
	// Each test's server is a sharq of its own: it must leave the others' pods alone.
	args = append([]string{"--kubeconfig", kc, "--kube-instance", prefix, "--kube-instance-types", table,
		"--kube-namespace", prefix + "-{share}"}, args...)
	return &kubeServer{server: startServer(t, serverOptions{executor: "kube", args: args}), cs: cs, prefix: prefix, args: args}
}

// pods lists the job's pods (by its sharq.dev/job label).
func (k *kubeServer) pods(t *testing.T, jobArn string) []corev1.Pod {
	t.Helper()
	id := jobArn[strings.LastIndex(jobArn, "/")+1:]
	l, err := k.cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{LabelSelector: "sharq.dev/job=" + id})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// The walkthrough through the Go SDK on Kubernetes: cross-share and
// in-share preemption delete pods, and every job's pods go at the end.
func TestKubeWalkthroughSDK(t *testing.T) {
	t.Parallel()
	k := startKube(t, "--stop-grace", "2s")
	c := k.client()
	live := walkthroughSDK(t, c, func(string) *batch.Client { return c })
	endAll(t, c, live, k.dataDir, k.cmd.Process.Pid)
	testwait.Until(t, 30*time.Second, func() error {
		l, err := k.cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=sharq"})
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			if strings.HasPrefix(p.Namespace, k.prefix+"-") && p.Status.Phase == corev1.PodRunning {
				return notYet("pod %s/%s of an ended job still runs", p.Namespace, p.Name)
			}
		}
		return nil
	})
	k.stop()
}

// scripts/aws-cli-e2e.sh passes against a server with the kube executor.
func TestKubeAWSCLIScript(t *testing.T) {
	t.Parallel()
	k := startKube(t, "--stop-grace", "2s")
	runScript(t, 10*time.Minute, "scripts/aws-cli-e2e.sh", k.url)
	k.stop()
}

// A preemptor's pods are created only after its victims' pods are gone,
// and the victims' pods are deleted with the grace period (they ignore
// SIGTERM, so they stay for all of it): cross-share, then in-share.
func TestKubePreemptorWaitsForVictimPods(t *testing.T) {
	t.Parallel()
	k := startKube(t, "--stop-grace", "3s")
	c := k.client()
	setUpWalkthrough(t, c, 3)
	events := watchPods(t, k.cs)
	stubborn := map[string]string{"KWOK_TERM": "ignore"}

	high := submit(t, c, jobSpec{name: "high", share: "QS1", priority: 3, env: stubborn})
	med := submit(t, c, jobSpec{name: "med", share: "QS1", priority: 2, env: stubborn})
	waitStatus(t, c, high, types.ServiceJobStatusRunning)
	waitStatus(t, c, med, types.ServiceJobStatusRunning)
	medPods := k.pods(t, med)

	begin := time.Now()
	qs2 := submit(t, c, jobSpec{name: "qs2", share: "QS2", priority: 1})
	waitStatus(t, c, qs2, types.ServiceJobStatusRunning)
	// kwok removes the victim's pods at their deletionTimestamp, in whole
	// seconds: up to one before the grace period ends.
	if took := time.Since(begin); took < 2*time.Second {
		t.Errorf("cross-share: the preemptor ran %s after it was submitted, before its victim's 3 s grace period ended", took)
	}
	events.wantGoneBeforeCreated(t, "cross-share", medPods, k.pods(t, qs2))
	for _, p := range medPods {
		if g := events.deletionGrace(p.Name); g != 3 {
			t.Errorf("cross-share: victim pod %s deleted with grace %d s, want 3", p.Name, g)
		}
	}

	low := submit(t, c, jobSpec{name: "low", share: "QS1", priority: 1})
	waitStatus(t, c, low, types.ServiceJobStatusRunnable)
	highPods := k.pods(t, high)
	_, err := c.UpdateServiceJob(ctx(t), &batch.UpdateServiceJobInput{JobId: aws.String(low), SchedulingPriority: aws.Int32(9)})
	fatalIf(t, "UpdateServiceJob", err)
	waitStatus(t, c, low, types.ServiceJobStatusRunning)
	waitStatus(t, c, high, types.ServiceJobStatusRunnable)
	events.wantGoneBeforeCreated(t, "in-share", highPods, k.pods(t, low))
	k.stop()
}

// A sharq kill -9 with running pods loses none: after the restart the
// jobs are still RUNNING on the same pods.
func TestKubeKill9KeepsPods(t *testing.T) {
	t.Parallel()
	k := startKube(t)
	c := k.client()
	setUpWalkthrough(t, c, 3)
	var jobs []string
	uids := map[string]bool{}
	for _, share := range []string{"QS1", "QS2", "QS3"} {
		j := submit(t, c, jobSpec{name: "j" + share, share: share, priority: 1})
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		waitStatus(t, c, j, types.ServiceJobStatusRunning)
		for _, p := range k.pods(t, j) {
			uids[string(p.UID)] = true
		}
	}
	k.kill()
	k2 := startServer(t, serverOptions{dataDir: k.dataDir, executor: "kube", args: k.args})
	c = k2.client()
	for _, j := range jobs {
		if d := describe(t, c, j); d.Status != types.ServiceJobStatusRunning || len(d.Attempts) != 1 {
			t.Errorf("after kill -9: %s is %s with %d attempts, want RUNNING its first", aws.ToString(d.JobName), d.Status, len(d.Attempts))
		}
		for _, p := range k.pods(t, j) {
			if !uids[string(p.UID)] || p.DeletionTimestamp != nil {
				t.Errorf("after kill -9: pod %s is new or being deleted", p.Name)
			}
		}
	}
	k2.stop()
}

// podEvents records the pods' events in the API server's order.
type podEvents struct {
	mu  sync.Mutex
	evs []watch.Event
}

func watchPods(t *testing.T, cs kubernetes.Interface) *podEvents {
	t.Helper()
	w, err := cs.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=sharq"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	e := &podEvents{}
	go func() {
		for ev := range w.ResultChan() {
			e.mu.Lock()
			e.evs = append(e.evs, ev)
			e.mu.Unlock()
		}
	}()
	return e
}

// wantGoneBeforeCreated checks that every victim pod was deleted before
// any of the preemptor's pods was added.
func (e *podEvents) wantGoneBeforeCreated(t *testing.T, what string, victims, preemptor []corev1.Pod) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	index := func(typ watch.EventType, name string) int {
		return slices.IndexFunc(e.evs, func(ev watch.Event) bool {
			p, ok := ev.Object.(*corev1.Pod)
			return ok && ev.Type == typ && p.Name == name
		})
	}
	if len(victims) == 0 || len(preemptor) == 0 {
		t.Fatalf("%s: %d victim pods, %d preemptor pods", what, len(victims), len(preemptor))
	}
	for _, v := range victims {
		gone := index(watch.Deleted, v.Name)
		for _, p := range preemptor {
			if added := index(watch.Added, p.Name); gone < 0 || added < gone {
				t.Errorf("%s: preemptor pod %s was created (event %d) before victim pod %s was gone (event %d)", what, p.Name, added, v.Name, gone)
			}
		}
	}
}

// deletionGrace is the grace period the pod was deleted with (-1: none seen).
func (e *podEvents) deletionGrace(name string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.evs {
		if p, ok := ev.Object.(*corev1.Pod); ok && p.Name == name && p.DeletionGracePeriodSeconds != nil {
			return *p.DeletionGracePeriodSeconds
		}
	}
	return -1
}
