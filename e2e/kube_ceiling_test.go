package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// ceilingLabel marks the pods and Services the ceiling run makes itself.
const ceilingLabel = "sharq.dev/ceiling"

// scaleCeiling is the reference TestKubeScale's figures compare with: the
// same pods made straight from client-go by as many clients as sharq's
// executor has workers, with nothing of sharq in between. With services,
// each job is made as sharq makes a one-instance attempt, a headless
// Service (selecting nothing) and then its pod; without, the pod alone. It logs how fast the pods were created and ran,
// then deletes them all and waits until they are gone.
func scaleCeiling(t *testing.T, cs kubernetes.Interface, ns string, jobs []scaleJob, workers int, services bool) {
	t.Helper()
	what := "pods alone"
	if services {
		what = "a Service, then its pod"
	}
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	running := watchRunning(t, cs, ns)
	var mu sync.Mutex
	var created []time.Time
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	start := time.Now()
	err = parallel(workers, idx, func(i int) error {
		pod := ceilingPod(fmt.Sprintf("ceiling-%d", i), jobs[i].typ)
		if services {
			svc, err := cs.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Labels: pod.Labels},
				Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}}
		}
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			return err
		}
		mu.Lock()
		created = append(created, time.Now())
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatalf("ceiling: %v", err)
	}
	ran := running.wait(t, len(jobs), 5*time.Minute+time.Duration(len(jobs))*200*time.Millisecond)
	t.Logf("ceiling, %s from %d clients: pods created: %s", what, workers, rate(start, created))
	t.Logf("ceiling, %s from %d clients: pods running: %s", what, workers, rate(start, ran))

	zero := int64(0)
	sel := metav1.ListOptions{LabelSelector: ceilingLabel}
	if err := parallel(workers, idx, func(i int) error {
		name := fmt.Sprintf("ceiling-%d", i)
		err := cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err == nil || apierrors.IsNotFound(err) {
			if services { // no garbage collector runs on the test cluster
				err = cs.CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
			}
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}); err != nil {
		t.Fatalf("ceiling: delete: %v", err)
	}
	// Each asking lists pods from the API server the next run measures.
	testwait.Paced(t, 2*time.Minute, 200*time.Millisecond, func() error {
		l, err := cs.CoreV1().Pods(ns).List(context.Background(), sel)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) > 0 {
			return fmt.Errorf("ceiling: %d pods still there", len(l.Items))
		}
		return nil
	})
}

// ceilingPod is a one-instance pod of the scale table's type typ, placed
// as sharq places it.
func ceilingPod(name, typ string) *corev1.Pod {
	res := corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("4Gi")}
	if typ == scaleGPU {
		res["nvidia.com/gpu"] = resource.MustParse("1")
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ceilingLabel: "1"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{"node.kubernetes.io/instance-type": "g5.48xlarge", kubetest.PoolLabel: scalePool},
			Tolerations:   []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "train", Image: trainingImage,
				Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
		},
	}
}

// runningPods records when each ceiling pod was first seen Running.
type runningPods struct {
	mu   sync.Mutex
	at   map[string]time.Time
	more chan struct{}
}

func watchRunning(t *testing.T, cs kubernetes.Interface, ns string) *runningPods {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts := metav1.ListOptions{LabelSelector: ceilingLabel}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &runningPods{at: map[string]time.Time{}, more: make(chan struct{}, 1)}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		// The API server ends a watch now and then: list what it missed
		// and watch again.
		for {
			r.follow(w)
			if ctx.Err() != nil {
				return
			}
			l, err := cs.CoreV1().Pods(ns).List(ctx, opts)
			if err != nil {
				return
			}
			for i := range l.Items {
				r.saw(&l.Items[i])
			}
			o := opts
			o.ResourceVersion = l.ResourceVersion
			if w, err = cs.CoreV1().Pods(ns).Watch(ctx, o); err != nil {
				return
			}
		}
	}()
	return r
}

func (r *runningPods) follow(w watch.Interface) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted {
			r.saw(pod)
		}
	}
}

func (r *runningPods) saw(pod *corev1.Pod) {
	if pod.Status.Phase != corev1.PodRunning {
		return
	}
	r.mu.Lock()
	if _, seen := r.at[pod.Name]; !seen {
		r.at[pod.Name] = time.Now()
	}
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// wait returns when the pods ran once n have.
func (r *runningPods) wait(t *testing.T, n int, timeout time.Duration) []time.Time {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		if len(r.at) >= n {
			out := make([]time.Time, 0, len(r.at))
			for _, at := range r.at {
				out = append(out, at)
			}
			r.mu.Unlock()
			return out
		}
		seen := len(r.at)
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("ceiling: %d of %d pods ran within %v (the watch may have ended)", seen, n, timeout)
		}
	}
}
