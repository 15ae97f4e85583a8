// Package kubetest reaches the Kubernetes test cluster that .ci/kube/up
// starts (a real kube-apiserver and kube-scheduler, nodes simulated by
// kwok) and makes nodes and instance-type tables for tests. Tests that use
// it skip without a cluster, unless SHARQ_REQUIRE_KUBE=1 (as in CI) makes
// that a failure. .ci/kube/stages.yaml says how a pod's KWOK_* variables
// make kwok run it.
package kubetest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// PoolLabel is the node label that keeps a test's pods on its own nodes.
const PoolLabel = "sharq.dev/test-pool"

// Kubeconfig is the test cluster's kubeconfig file ($SHARQ_KUBECONFIG).
func Kubeconfig(t testing.TB) string {
	t.Helper()
	path := os.Getenv("SHARQ_KUBECONFIG")
	if path == "" {
		msg := "no Kubernetes test cluster: start one with .ci/kube/up DIR and set SHARQ_KUBECONFIG=DIR/kubeconfig"
		if os.Getenv("SHARQ_REQUIRE_KUBE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// Client is a client of the test cluster.
func Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// Nodes makes (once) n kwok nodes of the pool with the instance type typ
// (its node.kubernetes.io/instance-type, "g5.xlarge") and gpus GPUs each,
// tainted for GPU pods only.
func Nodes(t testing.TB, cs kubernetes.Interface, pool, typ string, n, gpus int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("%s-%s-%d", pool, strings.ReplaceAll(typ, ".", "-"), i)
		caps := corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"),
			"pods": resource.MustParse("110"), "nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": name,
					"node.kubernetes.io/instance-type": typ, PoolLabel: pool},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Capacity: caps, Allocatable: caps},
		}
		_, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("make node %s: %v", name, err)
		}
	}
}

// Table is an instance-type table (YAML) that places ml.g5.xlarge (1 GPU)
// and ml.g5.12xlarge (4 GPUs) on the pool's nodes of those types;
// ml.p5.48xlarge fits no node.
func Table(pool string) string {
	var b strings.Builder
	b.WriteString("types:\n")
	for _, it := range []struct {
		name string
		gpus int
		cpu  string
		mem  string
	}{{"g5.xlarge", 1, "3", "14Gi"}, {"g5.12xlarge", 4, "46", "180Gi"}, {"p5.48xlarge", 8, "190", "1900Gi"}} {
		fmt.Fprintf(&b, "  ml.%s:\n    gpus: %d\n    cpu: %q\n    memory: %s\n", it.name, it.gpus, it.cpu, it.mem)
		fmt.Fprintf(&b, "    nodeSelector: {node.kubernetes.io/instance-type: %s, %s: %s}\n", it.name, PoolLabel, pool)
		b.WriteString("    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n")
	}
	return b.String()
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace names a namespace after the test, its pods and Services
// deleted before and after it (the test cluster runs no namespace
// controller to do that).
func Namespace(t testing.TB, cs kubernetes.Interface, suffix string) string {
	t.Helper()
	ns := strings.Trim(notName.ReplaceAllString(strings.ToLower(t.Name()+"-"+suffix), "-"), "-")
	if len(ns) > 63 {
		ns = strings.Trim(ns[len(ns)-63:], "-")
	}
	Wipe(cs, ns)
	t.Cleanup(func() { Wipe(cs, ns) })
	return ns
}

// Wipe deletes the pods (at once) and Services of a namespace.
func Wipe(cs kubernetes.Interface, ns string) {
	ctx := context.Background()
	zero := int64(0)
	cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range svcs.Items {
			cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		}
	}
}
