package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

const wait = 60 * time.Second

// Ensure a two-instance attempt becomes two pods with the payload's image,
// command, environment, the SageMaker variables, the table's resources and
// placement and the grace period, bound by kube-scheduler to nodes of the
// instance type, and that it goes Starting, Running, Succeeded.
func TestPodsCarryThePayloadAndTheTable(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("two", "ml.g5.xlarge", 2, map[string]string{"KWOK_RUN": "2s", "SEED": "7"}))
	h.wait("two", executor.Running, wait)
	pods := h.pods("two")
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	for _, p := range pods {
		c := p.Spec.Containers[0]
		if c.Image != "registry.example/train:1" || strings.Join(c.Command, " ") != "python train.py" || strings.Join(c.Args, " ") != "--epochs 3" {
			t.Errorf("pod %s runs %s %v %v, want the payload's image, entrypoint and arguments", p.Name, c.Image, c.Command, c.Args)
		}
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		host := p.Labels[labelHost]
		svc := objectName(executor.Attempt{ID: "two", JobName: jobName("two")})
		want := map[string]string{"SEED": "7", "SM_HP_LR": "0.1", "SM_HP_EPOCHS": "3", "SM_NUM_GPUS": "1",
			"SM_HOSTS": `["algo-1.` + svc + `","algo-2.` + svc + `"]`, "SM_CURRENT_HOST": host + "." + svc,
			"SM_CURRENT_INSTANCE_TYPE": "ml.g5.xlarge", "TRAINING_JOB_NAME": "two", "SM_CHECKPOINT_DIR": "/opt/ml/checkpoints"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("pod %s: %s=%q, want %q", p.Name, k, env[k], v)
			}
		}
		if p.Spec.Hostname != host || p.Spec.Subdomain != svc {
			t.Errorf("pod %s: hostname %q subdomain %q, want %q and %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain, host, svc)
		}
		lim := c.Resources.Limits
		if lim.Name("nvidia.com/gpu", "").Value() != 1 || lim.Cpu().String() != "3" || lim.Memory().String() != "14Gi" {
			t.Errorf("pod %s: limits %v, want 1 GPU, 3 CPUs, 14Gi", p.Name, lim)
		}
		if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != 5 {
			t.Errorf("pod %s: terminationGracePeriodSeconds %v, want 5", p.Name, g)
		}
		// The API server adds its default tolerations after the table's.
		if len(p.Spec.Tolerations) == 0 || p.Spec.Tolerations[0].Key != "nvidia.com/gpu" ||
			p.Spec.NodeSelector["node.kubernetes.io/instance-type"] != "g5.xlarge" {
			t.Errorf("pod %s: selector %v, tolerations %v; want the table's", p.Name, p.Spec.NodeSelector, p.Spec.Tolerations)
		}
		node, err := h.cs.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil || node.Labels["node.kubernetes.io/instance-type"] != "g5.xlarge" {
			t.Errorf("pod %s is on node %q (%v), want a g5.xlarge node", p.Name, p.Spec.NodeName, err)
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Service" || p.OwnerReferences[0].Name != svc {
			t.Errorf("pod %s: owners %v, want the attempt's Service", p.Name, p.OwnerReferences)
		}
	}
	svc, err := h.cs.CoreV1().Services(h.ns).Get(context.Background(), pods[0].Spec.Subdomain, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[labelAttempt] != svc.Name {
		t.Errorf("service %v (%v), want a headless one that selects the pods", svc, err)
	}
	h.wait("two", executor.Succeeded, wait)
	var states []executor.State
	for _, u := range h.updates("two") {
		states = append(states, u.State)
	}
	if got := states[len(states)-2:]; got[0] != executor.Running || got[1] != executor.Succeeded {
		t.Errorf("updates %v, want them to end with RUNNING, SUCCEEDED", states)
	}
}

// Ensure a one-instance attempt's host is "algo-1", as on SageMaker, and
// that its Service, which owns the pod, selects nothing: the host needs no
// DNS name, and kube-scheduler's default spreading matches each pod
// against the Services that select pods.
func TestOneInstanceNeedsNoDNS(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("one", "ml.g5.xlarge", 1, nil))
	h.wait("one", executor.Running, wait)
	pods := h.pods("one")
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	env := map[string]string{}
	for _, e := range pods[0].Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["SM_HOSTS"] != `["algo-1"]` || env["SM_CURRENT_HOST"] != "algo-1" || pods[0].Spec.Hostname != "algo-1" {
		t.Errorf("SM_HOSTS %s, SM_CURRENT_HOST %s, hostname %s; want algo-1", env["SM_HOSTS"], env["SM_CURRENT_HOST"], pods[0].Spec.Hostname)
	}
	svc := objectName(executor.Attempt{ID: "one", JobName: jobName("one")})
	s, err := h.cs.CoreV1().Services(h.ns).Get(context.Background(), svc, metav1.GetOptions{})
	if err != nil || s.Spec.ClusterIP != corev1.ClusterIPNone || len(s.Spec.Selector) != 0 {
		t.Errorf("service %v (%v), want a headless one without a selector", s, err)
	}
	if o := pods[0].OwnerReferences; len(o) != 1 || o[0].Kind != "Service" || o[0].Name != svc {
		t.Errorf("owners %v, want the attempt's Service", o)
	}
}

// Ensure Start is idempotent by attempt ID, within one executor and
// across a restart.
func TestStartIsIdempotent(t *testing.T) {
	h := newHarness(t)
	a := newAttempt("same", "ml.g5.xlarge", 2, nil)
	h.start(a)
	h.start(a)
	h.wait("same", executor.Running, wait)
	h.close()
	h.open()
	h.start(a)
	time.Sleep(500 * time.Millisecond) // a third pod would come from the real API server: only waiting shows none does
	if n := len(h.pods("same")); n != 2 {
		t.Errorf("%d pods after three starts, want 2", n)
	}
}

// Ensure a container's exit code and reason become the attempt's failure.
func TestFailureCarriesExitCodeAndReason(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("exit3", "ml.g5.xlarge", 1, map[string]string{"KWOK_RUN": "500ms", "KWOK_EXIT_CODE": "3"}))
	h.start(newAttempt("oom", "ml.g5.12xlarge", 2, map[string]string{"KWOK_RUN": "500ms", "KWOK_EXIT_CODE": "137", "KWOK_REASON": "OOMKilled"}))
	u := h.wait("exit3", executor.Failed, wait)
	if u.ExitCode != 3 || !strings.HasPrefix(u.Reason, "exit code 3: Error") {
		t.Errorf("exit3 failed with %d %q, want exit code 3", u.ExitCode, u.Reason)
	}
	u = h.wait("oom", executor.Failed, wait)
	if u.ExitCode != 137 || !strings.HasPrefix(u.Reason, "exit code 137: OOMKilled") {
		t.Errorf("oom failed with %d %q, want 137 OOMKilled", u.ExitCode, u.Reason)
	}
}

// Ensure an image that cannot be pulled fails the attempt with the
// container's reason.
func TestImagePullBackOffFails(t *testing.T) {
	h := newHarness(t)
	a := newAttempt("nopull", "ml.g5.xlarge", 1, nil)
	a.Payload = []byte(payloadJSON("sharq.invalid/missing", nil))
	h.start(a)
	u := h.wait("nopull", executor.Failed, wait)
	if !strings.HasPrefix(u.Reason, "ImagePullBackOff: Back-off pulling image") {
		t.Errorf("reason %q, want ImagePullBackOff", u.Reason)
	}
}

// Ensure a pod no node can take is given up after the configured time and
// reported Lost (requeued without using a retry), its pods deleted.
func TestUnschedulableIsLost(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Unschedulable = 2 * time.Second })
	h.start(newAttempt("nowhere", "ml.p5.48xlarge", 1, nil))
	u := h.wait("nowhere", executor.Lost, wait)
	if !strings.HasPrefix(u.Reason, "Unschedulable for 2s: ") {
		t.Errorf("reason %q, want Unschedulable", u.Reason)
	}
	if n := len(h.pods("nowhere")); n != 0 {
		t.Errorf("%d pods left, want none", n)
	}
}

// Ensure Stop deletes the pods with the grace period and reports Stopped
// only once they are gone; many stops proceed together.
func TestStopWaitsForPodsToGo(t *testing.T) {
	h := newHarness(t)
	ids := []string{"s1", "s2", "s3"}
	for _, id := range ids {
		h.start(newAttempt(id, "ml.g5.xlarge", 2, map[string]string{"KWOK_TERM": "ignore"}))
	}
	for _, id := range ids {
		h.wait(id, executor.Running, wait)
	}
	begin := time.Now()
	for _, id := range ids {
		if err := h.ex.Stop(context.Background(), id, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range h.pods("s1") {
		if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 3 {
			t.Errorf("pod %s deleted with grace %v, want 3 s", p.Name, p.DeletionGracePeriodSeconds)
		}
	}
	for _, id := range ids {
		u := h.wait(id, executor.Stopped, wait)
		// kwok removes the pods at their deletionTimestamp, which has whole
		// seconds: up to a second before the grace period ends.
		if took := u.At.Sub(begin); took < 2*time.Second {
			t.Errorf("%s reported stopped after %s, before its pods' 3 s grace period ended", id, took)
		}
		if n := len(h.pods(id)); n != 0 {
			t.Errorf("%s reported stopped with %d pods left", id, n)
		}
	}
	if took := time.Since(begin); took > 3*time.Second+20*time.Second {
		t.Errorf("three stops took %s: they did not proceed together", took)
	}
}

// Ensure a pod that outlives its grace period is force-deleted and the
// attempt says so.
func TestStopForceDeletesAfterGrace(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("stuck", "ml.g5.xlarge", 1, map[string]string{"KWOK_TERM": "hang"}))
	h.wait("stuck", executor.Running, wait)
	if err := h.ex.Stop(context.Background(), "stuck", time.Second); err != nil {
		t.Fatal(err)
	}
	u := h.wait("stuck", executor.Stopped, wait)
	if !strings.Contains(u.Reason, "force-deleted") {
		t.Errorf("reason %q, want it to say the pods were force-deleted", u.Reason)
	}
	if n := len(h.pods("stuck")); n != 0 {
		t.Errorf("%d pods left, want none", n)
	}
}

// Ensure the attempt's timeout, counted from Running, stops it.
func TestTimeoutStops(t *testing.T) {
	h := newHarness(t)
	a := newAttempt("slow", "ml.g5.xlarge", 1, nil)
	a.Timeout = 2 * time.Second
	h.start(a)
	run := h.wait("slow", executor.Running, wait)
	u := h.wait("slow", executor.Stopped, wait)
	// The container's start time has whole seconds: the timeout may end up
	// to a second before 2 s after the RUNNING report.
	if u.Reason != "Attempt duration exceeded" || u.At.Sub(run.At) < time.Second {
		t.Errorf("stopped %s after running with %q, want Attempt duration exceeded after 2 s", u.At.Sub(run.At), u.Reason)
	}
}

// Ensure a restarted executor adopts live pods (Close stops none),
// reports attempts that ended while it was away, and deletes orphan pods.
func TestRestartAdoptsAndCleansUp(t *testing.T) {
	h := newHarness(t)
	h.start(newAttempt("live", "ml.g5.xlarge", 2, nil))
	h.start(newAttempt("ends", "ml.g5.xlarge", 1, map[string]string{"KWOK_RUN": "3s"}))
	h.start(newAttempt("orphan", "ml.g5.xlarge", 1, nil))
	for _, id := range []string{"live", "ends", "orphan"} {
		h.wait(id, executor.Running, wait)
	}
	h.close()
	orphan := objectName(executor.Attempt{ID: "orphan", JobName: jobName("orphan")})
	if err := h.cs.CoreV1().Services(h.ns).Delete(context.Background(), orphan, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second) // "ends" ends (KWOK_RUN 3s) in the real cluster while no executor watches
	h.open()
	got, err := h.ex.Attempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]executor.State{}
	for _, u := range got {
		states[u.AttemptID] = u.State
	}
	if states["live"] != executor.Running || states["ends"] != executor.Succeeded || states["orphan"] != "" {
		t.Errorf("Attempts after restart: %v, want live RUNNING, ends SUCCEEDED and no orphan", states)
	}
	if n := len(h.pods("live")); n != 2 {
		t.Errorf("live has %d pods after the restart, want 2", n)
	}
	testwait.Until(t, wait, func() error {
		if n := len(h.pods("orphan")); n != 0 {
			return fmt.Errorf("the orphan still has %d pods", n)
		}
		return nil
	})
	// A stop the engine makes after the restart works on adopted pods.
	if err := h.ex.Stop(context.Background(), "live", time.Second); err != nil {
		t.Fatal(err)
	}
	h.wait("live", executor.Stopped, wait)
}

// Ensure a payload or an instance type that cannot become pods is a
// permanent error.
func TestStartRefusesWhatCannotRun(t *testing.T) {
	h := newHarness(t)
	noImage := newAttempt("noimage", "ml.g5.xlarge", 1, nil)
	noImage.Payload = []byte(`{"AlgorithmSpecification":{"ContainerEntrypoint":["x"]}}`)
	unknown := newAttempt("unknown", "ml.trn1.2xlarge", 1, nil)
	for _, a := range []executor.Attempt{noImage, unknown} {
		err := h.ex.Start(context.Background(), a)
		if !errors.Is(err, executor.ErrPermanent) {
			t.Errorf("Start %s: %v, want a permanent error", a.ID, err)
		}
	}
}

// Ensure the record on the Service reads back as written.
func TestAttemptRecordRoundTrips(t *testing.T) {
	o := Options{Namespace: "ns", Table: testTable(), DefaultGrace: time.Second}
	a := newAttempt("rec", "ml.g5.xlarge", 1, map[string]string{trainingjob.StopGraceEnv: "7"})
	a.Timeout = time.Minute
	s, err := o.build(a)
	if err != nil {
		t.Fatal(err)
	}
	var rec attemptRecord
	if err := json.Unmarshal([]byte(s.svc.Annotations[annotAttempt]), &rec); err != nil {
		t.Fatal(err)
	}
	want := attemptRecord{ID: "rec", JobID: "jid-rec", Hosts: 1, Grace: 7 * time.Second, GraceSet: true, Timeout: time.Minute}
	if rec != want {
		t.Errorf("record %+v, want %+v", rec, want)
	}
}

// Ensure an executor whose server does not lead creates and deletes
// nothing.
func TestNotHeldActsNot(t *testing.T) {
	var held atomic.Bool
	h := newHarness(t, func(o *Options) { o.Held = held.Load })
	if err := h.ex.Start(context.Background(), newAttempt("follower", "ml.g5.xlarge", 1, nil)); err == nil {
		t.Fatal("Start succeeded on a server that does not lead")
	}
	if n := len(h.pods("follower")); n != 0 {
		t.Errorf("%d pods, want none", n)
	}
	held.Store(true)
	h.start(newAttempt("follower", "ml.g5.xlarge", 1, nil))
	h.wait("follower", executor.Running, wait)
}

// Ensure an attempt's pods are built from the request it carries, parsed
// once by the engine, and leave that request as it was: pods get copies.
func TestBuildReadsCarriedRequest(t *testing.T) {
	o := Options{Namespace: "ns", Table: testTable(), DefaultGrace: time.Second}
	a := newAttempt("carried", "ml.g5.xlarge", 2, nil)
	r, err := trainingjob.Parse(a.Payload)
	if err != nil {
		t.Fatal(err)
	}
	a.Request, a.Payload = r, nil // nothing left to parse
	s, err := o.build(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.pods) != 2 {
		t.Fatalf("%d pods, want 2", len(s.pods))
	}
	for _, p := range s.pods {
		c := &p.Spec.Containers[0]
		if !slices.Equal(c.Command, []string{"python", "train.py"}) || !slices.Equal(c.Args, []string{"--epochs", "3"}) {
			t.Fatalf("pod %s runs %v %v, want the request's command", p.Name, c.Command, c.Args)
		}
		c.Command[0], c.Args[0] = "changed", "changed"
	}
	spec := r.AlgorithmSpecification
	if spec.ContainerEntrypoint[0] != "python" || spec.ContainerArguments[0] != "--epochs" {
		t.Errorf("building pods changed the request: %v %v", spec.ContainerEntrypoint, spec.ContainerArguments)
	}
}
