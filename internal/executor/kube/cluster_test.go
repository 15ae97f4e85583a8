package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// testPool labels the nodes this package makes, so that its pods land on
// no other package's nodes.
const testPool = "kube-executor"

// cluster is the test cluster (see kubetest), with this package's nodes.
func cluster(t *testing.T) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	cfg, err := LoadConfig(kubetest.Kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	kubetest.Nodes(t, cs, testPool, "g5.xlarge", 2, 8)
	kubetest.Nodes(t, cs, testPool, "g5.12xlarge", 1, 8)
	return cfg, cs
}

// testTable places ml.g5.xlarge (1 GPU) and ml.g5.12xlarge (4 GPUs) on the
// package's nodes; ml.p5.48xlarge has no node.
func testTable() Table {
	tol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	sel := func(typ string) map[string]string {
		return map[string]string{"node.kubernetes.io/instance-type": typ, kubetest.PoolLabel: testPool}
	}
	return Table{Types: map[string]InstanceType{
		"ml.g5.xlarge":   {GPUs: 1, CPU: "3", Memory: "14Gi", NodeSelector: sel("g5.xlarge"), Tolerations: tol},
		"ml.g5.12xlarge": {GPUs: 4, CPU: "46", Memory: "180Gi", NodeSelector: sel("g5.12xlarge"), Tolerations: tol},
		"ml.p5.48xlarge": {GPUs: 8, NodeSelector: sel("p5.48xlarge"), Tolerations: tol},
	}}
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
	h := &harness{t: t, cs: cs, ns: kubetest.Namespace(t, cs, "")}
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
			case u, ok := <-ch:
				if !ok {
					return
				}
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
	var found executor.Update
	testwait.Until(h.t, timeout, func() error {
		for _, u := range h.updates(id) {
			if u.State == state {
				found = u
				return nil
			}
		}
		return fmt.Errorf("attempt %s: no %s update; got %v", id, state, h.updates(id))
	})
	return found
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
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", k, env[k])
	}
	b.WriteString(`}}`)
	return b.String()
}
