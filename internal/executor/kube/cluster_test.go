package kube

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sharq-dev/sharq/internal/executor"
)

// The tests run against the cluster that .ci/kube/up starts: a real
// kube-apiserver and kube-scheduler, with kwok's nodes (see
// .ci/kube/stages.yaml for how the pods' KWOK_* variables drive them).
// SHARQ_KUBECONFIG names its kubeconfig; without it the tests skip,
// unless SHARQ_REQUIRE_KUBE=1 (as in CI) makes that a failure.

// testPool labels the nodes this package makes, so that its pods land on
// no other package's nodes.
const testPool = "kube-executor"

var clusterOnce struct {
	sync.Once
	cfg *rest.Config
	err error
}

// cluster returns the test cluster's configuration, with this package's
// nodes made.
func cluster(t *testing.T) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	path := os.Getenv("SHARQ_KUBECONFIG")
	if path == "" {
		msg := "no Kubernetes test cluster: start one with .ci/kube/up DIR and set SHARQ_KUBECONFIG=DIR/kubeconfig"
		if os.Getenv("SHARQ_REQUIRE_KUBE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	clusterOnce.Do(func() {
		clusterOnce.cfg, clusterOnce.err = LoadConfig(path)
		if clusterOnce.err == nil {
			clusterOnce.err = makeNodes(clusterOnce.cfg)
		}
	})
	if clusterOnce.err != nil {
		t.Fatal(clusterOnce.err)
	}
	return clusterOnce.cfg, kubernetes.NewForConfigOrDie(clusterOnce.cfg)
}

// makeNodes makes kwok nodes of two instance types, 8 GPUs each.
func makeNodes(cfg *rest.Config) error {
	cs := kubernetes.NewForConfigOrDie(cfg)
	for i, typ := range []string{"g5.xlarge", "g5.xlarge", "g5.12xlarge"} {
		name := fmt.Sprintf("%s-%d", testPool, i)
		caps := corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"),
			"pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8")}
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": name,
					"node.kubernetes.io/instance-type": typ, "sharq.dev/test-pool": testPool},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Capacity: caps, Allocatable: caps},
		}
		_, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("make node %s: %w", name, err)
		}
	}
	return nil
}

// testTable places ml.g5.xlarge (1 GPU) and ml.g5.12xlarge (4 GPUs) on the
// package's nodes; ml.p5.48xlarge has no node.
func testTable() Table {
	tol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	sel := func(typ string) map[string]string {
		return map[string]string{"node.kubernetes.io/instance-type": typ, "sharq.dev/test-pool": testPool}
	}
	return Table{Types: map[string]InstanceType{
		"ml.g5.xlarge":   {GPUs: 1, CPU: "3", Memory: "14Gi", NodeSelector: sel("g5.xlarge"), Tolerations: tol},
		"ml.g5.12xlarge": {GPUs: 4, CPU: "46", Memory: "180Gi", NodeSelector: sel("g5.12xlarge"), Tolerations: tol},
		"ml.p5.48xlarge": {GPUs: 8, NodeSelector: sel("p5.48xlarge"), Tolerations: tol},
	}}
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// testNamespace is a namespace of the test's own; its pods and services
// are deleted when the test ends (this cluster runs no namespace
// controller to do it).
func testNamespace(t *testing.T, cs kubernetes.Interface) string {
	ns := "t-" + strings.Trim(notName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(ns) > 63 {
		ns = ns[:63]
	}
	t.Cleanup(func() { wipe(cs, ns) })
	wipe(cs, ns)
	return ns
}

func wipe(cs kubernetes.Interface, ns string) {
	ctx := context.Background()
	zero := int64(0)
	cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	svcs, _ := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if svcs != nil {
		for _, s := range svcs.Items {
			cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		}
	}
}

// harness is an executor on the test cluster and what it reported.
type harness struct {
	t    *testing.T
	cs   kubernetes.Interface
	ex   *Executor
	opts Options
	ns   string
	mu   sync.Mutex
	ups  []executor.Update
	done chan struct{}
}

func newHarness(t *testing.T, tweak ...func(*Options)) *harness {
	t.Helper()
	cfg, cs := cluster(t)
	h := &harness{t: t, cs: cs, ns: testNamespace(t, cs)}
	h.opts = Options{Config: cfg, Namespace: h.ns, Table: testTable(), DefaultGrace: 5 * time.Second,
		ForceAfter: 2 * time.Second}
	for _, f := range tweak {
		f(&h.opts)
	}
	h.open()
	return h
}

// open starts an executor and collects its updates.
func (h *harness) open() {
	h.t.Helper()
	ex, err := New(context.Background(), h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.ex, h.done = ex, make(chan struct{})
	ch, done := ex.Updates(), h.done
	go func() {
		for {
			select {
			case u := <-ch:
				h.mu.Lock()
				h.ups = append(h.ups, u)
				h.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	h.t.Cleanup(h.close)
}

func (h *harness) close() {
	if h.ex == nil {
		return
	}
	h.ex.Close()
	close(h.done)
	h.ex = nil
}

func (h *harness) start(a executor.Attempt) {
	h.t.Helper()
	if err := h.ex.Start(context.Background(), a); err != nil {
		h.t.Fatalf("Start %s: %v", a.ID, err)
	}
}

// wait waits for the attempt's update in state and returns it.
func (h *harness) wait(id string, state executor.State, timeout time.Duration) executor.Update {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		for _, u := range h.ups {
			if u.AttemptID == id && u.State == state {
				h.mu.Unlock()
				return u
			}
		}
		h.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("attempt %s: no %s update within %s; got %v", id, state, timeout, h.updates(id))
	return executor.Update{}
}

func (h *harness) updates(id string) []executor.Update {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []executor.Update
	for _, u := range h.ups {
		if u.AttemptID == id {
			out = append(out, u)
		}
	}
	return out
}

// pods lists the attempt's pods on the API server.
func (h *harness) pods(id string) []corev1.Pod {
	h.t.Helper()
	l, err := h.cs.CoreV1().Pods(h.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: labelAttempt + "=" + objectName(executor.Attempt{ID: id, JobName: jobName(id)})})
	if err != nil {
		h.t.Fatal(err)
	}
	return l.Items
}

// jobName is the job name the tests give attempt id.
func jobName(id string) string { return "job-" + id }

// newAttempt is an attempt of count instances of typ running image with env.
func newAttempt(id, typ string, count int, env map[string]string) executor.Attempt {
	return executor.Attempt{ID: id, JobID: "jid-" + id, JobName: jobName(id),
		Payload:   []byte(payloadJSON("registry.example/train:1", env)),
		Instances: []executor.Instances{{Type: typ, Count: count}}}
}

func payloadJSON(image string, env map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"AlgorithmSpecification":{"TrainingImage":%q,"ContainerEntrypoint":["python","train.py"],"ContainerArguments":["--epochs","3"]},`, image)
	b.WriteString(`"HyperParameters":{"lr":"0.1","epochs":3},"Environment":{`)
	first := true
	for _, k := range sortedKeys(env) {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", k, env[k])
	}
	b.WriteString(`}}`)
	return b.String()
}
