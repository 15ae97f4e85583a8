package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// stagingReason is the STARTING reason while a pod's init container
// stages its /opt/ml.
const stagingReason = "Downloading input data"

// startKubeByHand is startKube with the jobs' pods on a node of the
// test's own that kwok does not manage: no one but the test moves their
// state, as a kubelet would, so that it can hold a pod in its stage or
// upload for as long as it needs.
func startKubeByHand(t *testing.T) *kubeServer {
	t.Helper()
	cs := kubetest.Client(t)
	pool := "hand-" + strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	handNode(t, cs, pool)
	table := filepath.Join(t.TempDir(), "hand.yaml")
	if err := os.WriteFile(table, []byte(kubetest.Table(pool)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stager image is named, as a deployment would: the pods stage.
	return startKube(t, "--stop-grace", "2s", "--kube-instance-types", table, "--kube-stager-image", "registry.example/sharq:1")
}

// handNode makes a node of 8 ml.g5.xlarge GPUs in the pool without
// kwok's label: the scheduler binds pods to it and nothing runs them.
func handNode(t *testing.T, cs kubernetes.Interface, pool string) {
	t.Helper()
	name := pool + "-g5-xlarge-0"
	caps := corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"),
		"pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8")}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name,
			"node.kubernetes.io/instance-type": "g5.xlarge", kubetest.PoolLabel: pool}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: caps, Allocatable: caps},
	}
	del := func() {
		err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete node %s: %v", name, err)
		}
	}
	del()
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("make node %s: %v", name, err)
	}
	t.Cleanup(del)
}

// boundPods waits until the job has n pods, all bound to a node, and
// checks that each stages in sharq's init container.
func (k *kubeServer) boundPods(t *testing.T, job string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	testwait.Until(t, 30*time.Second, func() error {
		pods = k.pods(t, job)
		if len(pods) != n {
			return notYet("%d pods, want %d", len(pods), n)
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				return notYet("pod %s is not bound yet", p.Name)
			}
		}
		return nil
	})
	for _, p := range pods {
		if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Image != "registry.example/sharq:1" {
			t.Fatalf("pod %s has init containers %s, want sharq's stage", p.Name, js(p.Spec.InitContainers))
		}
	}
	return pods
}

// byHost is the job's pods by their sharq.dev/host label.
func byHost(pods []corev1.Pod) map[string]corev1.Pod {
	m := map[string]corev1.Pod{}
	for _, p := range pods {
		m[p.Labels["sharq.dev/host"]] = p
	}
	return m
}

// kubelet sets a pod's status as its kubelet would report the phase.
func kubelet(t *testing.T, cs kubernetes.Interface, pod corev1.Pod, phase func(*corev1.Pod)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID != pod.UID {
			return fmt.Errorf("pod %s was replaced", pod.Name)
		}
		phase(p)
		_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	fatalIf(t, "set the status of pod "+pod.Name, err)
}

// The phases of a pod with sharq's stage, as the kubelet reports them.
func staging(p *corev1.Pod) {
	now := metav1.Now()
	p.Status.Phase, p.Status.StartTime = corev1.PodPending, &now
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.InitContainers[0].Name, Image: p.Spec.InitContainers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

func staged(p *corev1.Pod) {
	now := metav1.Now()
	p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: *p.Status.StartTime, FinishedAt: now}}
}

// training: the stage is done and the training container (sharq's
// wrapper, which runs the job and then uploads) runs.
func training(p *corev1.Pod) {
	if p.Status.StartTime == nil {
		staging(p)
	}
	staged(p)
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses[0].Ready, p.Status.ContainerStatuses[0].Started = true, aws.Bool(true)
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
}

// uploaded: the wrapper has uploaded the host's files and exited 0.
func uploaded(p *corev1.Pod) {
	if p.Status.Phase != corev1.PodRunning {
		training(p)
	}
	started := p.Status.ContainerStatuses[0].State.Running.StartedAt
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses[0].Ready, p.Status.ContainerStatuses[0].Started = false, aws.Bool(false)
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.Now()}}
}

// waitReason waits until the job is in status with statusReason reason.
func waitReason(t *testing.T, k *kubeServer, job string, status types.ServiceJobStatus, reason string) {
	t.Helper()
	c := k.client()
	testwait.Until(t, 30*time.Second, func() error {
		d := describe(t, c, job)
		if d.Status != status || aws.ToString(d.StatusReason) != reason {
			return notYet("%s (%q), want %s (%q)", d.Status, aws.ToString(d.StatusReason), status, reason)
		}
		return nil
	})
}

// wantPhases waits until the console shows the job's only attempt on
// pods of these phases, by host.
func wantPhases(t *testing.T, k *kubeServer, job string, phases map[string]string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() error {
		d := consoleDetail(t, k.server, job)
		if len(d.Instances) != 1 {
			return notYet("the console shows instances of %d attempts", len(d.Instances))
		}
		got := map[string]string{}
		for _, in := range d.Instances[0] {
			got[in.Host] = in.Phase
		}
		if !maps.Equal(got, phases) {
			return notYet("the console shows pods %v, want %v", got, phases)
		}
		return nil
	})
}

// wantOneAttempt checks that the job ended as it should in its first
// attempt, to which its pods belong.
func wantOneAttempt(t *testing.T, k *kubeServer, job string, pods []corev1.Pod) {
	t.Helper()
	waitReason(t, k, job, types.ServiceJobStatusSucceeded, "Training job completed")
	d := describe(t, k.client(), job)
	if len(d.Attempts) != 1 {
		t.Fatalf("%s has %d attempts, want its first only: %s", aws.ToString(d.JobName), len(d.Attempts), js(d.Attempts))
	}
	for _, p := range pods {
		if id := attemptID(t, d.Attempts[0].ServiceResourceId); podAttempt(t, p) != id {
			t.Errorf("pod %s belongs to attempt %s, not the job's %s", p.Name, podAttempt(t, p), id)
		}
	}
}

// wantSamePods checks, when the test ends, that the job's pods are
// exactly the ones it had at first: none added, none replaced, none
// deleted, over the whole of the watch.
// (Deferred, it names no caller: its messages say which job.)
func wantSamePods(t *testing.T, k *kubeServer, ev *podEvents, job string, before []corev1.Pod) {
	uids := map[string]bool{}
	for _, p := range before {
		uids[string(p.UID)] = true
	}
	id := job[strings.LastIndex(job, "/")+1:]
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range ev.evs {
		p, ok := e.Object.(*corev1.Pod)
		if !ok || p.Labels["sharq.dev/job"] != id {
			continue
		}
		if !uids[string(p.UID)] {
			t.Errorf("job %s: pod %s (uid %s) is not one of its first pods", id, p.Name, p.UID)
			uids[string(p.UID)] = true // once
		}
		if e.Type == watch.Deleted || p.DeletionTimestamp != nil {
			t.Errorf("job %s: pod %s was deleted (%s event)", id, p.Name, e.Type)
		}
	}
	if got := len(k.pods(t, job)); got != len(before) {
		t.Errorf("job %s has %d pods, want its %d", id, got, len(before))
	}
}

// A kill -9 of sharq while pods stage their /opt/ml loses nothing: after
// the restart on the same data dir, a pod still staging shows as STARTING
// with the stage's reason, one whose stage ended while sharq was down as
// RUNNING, and one whose stage began while sharq was down as STARTING with
// the stage's reason (which only the restarted sharq can have seen); all
// three jobs succeed in their first attempt, on the pods they had.
func TestKubeKill9WhileStaging(t *testing.T) {
	t.Parallel()
	k := startKubeByHand(t)
	c := k.client()
	ev := watchPods(t, k.cs)
	setUpWalkthrough(t, c, 3)
	stays := submit(t, c, jobSpec{name: "stays", share: "QS1", priority: 1})
	moves := submit(t, c, jobSpec{name: "moves", share: "QS2", priority: 1})
	late := submit(t, c, jobSpec{name: "late", share: "QS3", priority: 1})
	staysPods, movesPods, latePods := k.boundPods(t, stays, 1), k.boundPods(t, moves, 1), k.boundPods(t, late, 1)
	defer wantSamePods(t, k, ev, stays, staysPods)
	defer wantSamePods(t, k, ev, moves, movesPods)
	defer wantSamePods(t, k, ev, late, latePods)
	// Bound but not initialized (sharq's image being pulled, say):
	// STARTING, without a reason.
	waitReason(t, k, late, types.ServiceJobStatusStarting, "")
	for _, p := range append(staysPods, movesPods...) {
		kubelet(t, k.cs, p, staging)
	}
	waitReason(t, k, stays, types.ServiceJobStatusStarting, stagingReason)
	waitReason(t, k, moves, types.ServiceJobStatusStarting, stagingReason)
	if d := describe(t, c, late); d.Status != types.ServiceJobStatusStarting || aws.ToString(d.StatusReason) != "" {
		t.Fatalf("late is %s (%q) before its stage, want STARTING without a reason", d.Status, aws.ToString(d.StatusReason))
	}

	k.kill()
	kubelet(t, k.cs, movesPods[0], training)
	kubelet(t, k.cs, latePods[0], staging)
	k2 := startServer(t, serverOptions{dataDir: k.dataDir, executor: "kube", args: k.args})
	k.server = k2
	waitReason(t, k, moves, types.ServiceJobStatusRunning, "")
	waitReason(t, k, late, types.ServiceJobStatusStarting, stagingReason)
	if d := describe(t, k2.client(), stays); d.Status != types.ServiceJobStatusStarting || aws.ToString(d.StatusReason) != stagingReason {
		t.Errorf("after the restart, stays is %s (%q), want STARTING (%q)", d.Status, aws.ToString(d.StatusReason), stagingReason)
	}

	for _, p := range append(staysPods, latePods...) {
		kubelet(t, k.cs, p, training)
	}
	waitReason(t, k, stays, types.ServiceJobStatusRunning, "")
	waitReason(t, k, late, types.ServiceJobStatusRunning, "")
	all := [][]corev1.Pod{staysPods, movesPods, latePods}
	for _, pods := range all {
		kubelet(t, k.cs, pods[0], uploaded)
	}
	for i, job := range []string{stays, moves, late} {
		wantOneAttempt(t, k, job, all[i])
	}
	k2.stop()
}

// A kill -9 of sharq while pods upload loses nothing: a two-host job
// whose algo-2 has uploaded its part and whose algo-1 still uploads is
// RUNNING on the same pods after the restart and succeeds once algo-1 is
// done; a job whose upload ended while sharq was down succeeds on the
// restart. Neither gets a second attempt or a new pod.
func TestKubeKill9WhileUploading(t *testing.T) {
	t.Parallel()
	k := startKubeByHand(t)
	c := k.client()
	ev := watchPods(t, k.cs)
	setUpWalkthrough(t, c, 3)
	two := submit(t, c, jobSpec{name: "two", share: "QS1", priority: 1, instances: 2})
	one := submit(t, c, jobSpec{name: "one", share: "QS3", priority: 1})
	twoPods, onePods := k.boundPods(t, two, 2), k.boundPods(t, one, 1)
	defer wantSamePods(t, k, ev, two, twoPods)
	defer wantSamePods(t, k, ev, one, onePods)
	for _, p := range append(twoPods, onePods...) {
		kubelet(t, k.cs, p, training)
	}
	waitReason(t, k, two, types.ServiceJobStatusRunning, "")
	waitReason(t, k, one, types.ServiceJobStatusRunning, "")
	hosts := byHost(twoPods)
	// algo-2 handed its part to algo-1, which merges and uploads: sharq
	// has seen it so, as its console shows.
	kubelet(t, k.cs, hosts["algo-2"], uploaded)
	wantPhases(t, k, two, map[string]string{"algo-1": "Running", "algo-2": "Succeeded"})
	if d := describe(t, c, two); d.Status != types.ServiceJobStatusRunning {
		t.Fatalf("two is %s (%q) while algo-1 uploads, want RUNNING", d.Status, aws.ToString(d.StatusReason))
	}

	k.kill()
	kubelet(t, k.cs, onePods[0], uploaded)
	k2 := startServer(t, serverOptions{dataDir: k.dataDir, executor: "kube", args: k.args})
	k.server = k2
	wantOneAttempt(t, k, one, onePods)
	// algo-1 is still uploading: its job runs on, on the same pods.
	wantPhases(t, k, two, map[string]string{"algo-1": "Running", "algo-2": "Succeeded"})
	if d := describe(t, k2.client(), two); d.Status != types.ServiceJobStatusRunning {
		t.Errorf("after the restart, two is %s (%q) while algo-1 uploads, want RUNNING", d.Status, aws.ToString(d.StatusReason))
	}
	kubelet(t, k.cs, hosts["algo-1"], uploaded)
	wantOneAttempt(t, k, two, twoPods)
	k2.stop()
}

// The stage's progress in a pod (its log's last line, which kwok serves
// for KWOK_STAGE pods as .ci/kube/up writes it) is the job's STARTING
// reason in describe and sharq describe; the job then runs and succeeds.
func TestKubeStageProgressInDescribe(t *testing.T) {
	t.Parallel()
	k := startKube(t, "--stop-grace", "2s")
	c := k.client()
	setUpWalkthrough(t, c, 3)
	job := submit(t, c, jobSpec{name: "staging", share: "QS1", priority: 1, env: map[string]string{"KWOK_STAGE": "8s", "KWOK_RUN": "1s"}})
	const progress = "Downloading input data: channel train for algo-1, 1.5 GiB of 4.0 GiB"
	waitReason(t, k, job, types.ServiceJobStatusStarting, progress)
	out, err := exec.Command(sharqBin, "describe", "--endpoint", k.url, job[strings.LastIndex(job, "/")+1:]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), progress) {
		t.Errorf("sharq describe (%v) does not show %q:\n%s", err, progress, out)
	}
	waitReason(t, k, job, types.ServiceJobStatusSucceeded, "Training job completed")
	k.stop()
}
