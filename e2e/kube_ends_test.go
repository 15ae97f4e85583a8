package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/sharq-dev/sharq/internal/executor/kube/kubetest"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/web"
)

// submitRetried submits j with retryStrategy.attempts = attempts.
func submitRetried(t *testing.T, c *batch.Client, j jobSpec, attempts int32) string {
	t.Helper()
	in := submitInput(j)
	in.RetryStrategy = retryStrategy(attempts)
	out, err := c.SubmitServiceJob(ctx(t), in)
	fatalIf(t, "SubmitServiceJob "+j.name, err)
	return aws.ToString(out.JobArn)
}

// podAttempt is the attempt ID a pod of sharq's belongs to (its record).
func podAttempt(t *testing.T, p corev1.Pod) string {
	t.Helper()
	var rec struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(p.Annotations["sharq.dev/attempt"]), &rec); err != nil || rec.ID == "" {
		t.Fatalf("pod %s has no attempt record: %q", p.Name, p.Annotations["sharq.dev/attempt"])
	}
	return rec.ID
}

// A container that exits 3 fails its attempt with "exit code 3: Error:
// <last log lines>"; retryStrategy.attempts makes new attempts with new
// pods until the last, and the job then fails with that reason.
func TestKubeRetries(t *testing.T) {
	t.Parallel()
	k := startKube(t, "--stop-grace", "2s")
	c := k.client()
	setUpWalkthrough(t, c, 3)
	broken := submitRetried(t, c, jobSpec{name: "broken", share: "QS1", priority: 1,
		env: map[string]string{"KWOK_RUN": "500ms", "KWOK_EXIT_CODE": "3"}}, 3)

	d := waitStatus(t, c, broken, types.ServiceJobStatusFailed)
	// kwok's containers all print the two lines of .ci/kube/up's log file.
	const want = "exit code 3: Error: epoch 1 loss 0.9\nepoch 2 loss 0.5"
	if got := aws.ToString(d.StatusReason); got != want || len(d.Attempts) != 3 {
		t.Fatalf("broken FAILED with %d attempts and statusReason %q, want 3 and %q", len(d.Attempts), got, want)
	}
	var ids []string
	for i, a := range d.Attempts {
		if got := aws.ToString(a.StatusReason); got != want {
			t.Errorf("attempt %d ended with %q, want %q", i+1, got, want)
		}
		ids = append(ids, attemptID(t, a.ServiceResourceId))
	}
	// Each attempt ran in a pod of its own, which failed with the exit code
	// (the ended attempts' pods are kept for their logs).
	pods := k.pods(t, broken)
	var podIDs []string
	for _, p := range pods {
		podIDs = append(podIDs, podAttempt(t, p))
		cs := p.Status.ContainerStatuses
		if p.Status.Phase != corev1.PodFailed || len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 3 {
			t.Errorf("pod %s is %s with %s, want Failed with exit code 3", p.Name, p.Status.Phase, js(cs))
		}
	}
	slices.Sort(ids)
	slices.Sort(podIDs)
	if !slices.Equal(ids, podIDs) || len(slices.Compact(slices.Clone(ids))) != 3 {
		t.Errorf("the job's pods belong to attempts %v, want one pod for each of its 3 attempts %v", podIDs, ids)
	}
	k.stop()
}

// The cluster's failures are not the job's: a pod whose nodeSelector
// matches no node (until the test adds one) and a pod the kubelet evicts
// requeue the job without using a retry, though its retryStrategy allows
// a single attempt; each time new pods run the new attempt.
func TestKubeClusterFailuresUseNoRetry(t *testing.T) {
	t.Parallel()
	cs := kubetest.Client(t)
	// ml.g5.xlarge goes to a pool with no node yet.
	pool := "later-" + strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	node := fmt.Sprintf("%s-g5-xlarge-0", pool)
	deleteNode := func() {
		err := cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete node %s: %v", node, err)
		}
	}
	deleteNode()
	t.Cleanup(deleteNode)
	table := filepath.Join(t.TempDir(), "later.yaml")
	if err := os.WriteFile(table, []byte(kubetest.Table(pool)), 0o644); err != nil {
		t.Fatal(err)
	}
	k := startKube(t, "--stop-grace", "2s", "--kube-unschedulable-timeout", "2s", "--kube-instance-types", table)
	c := k.client()
	setUpWalkthrough(t, c, 3)
	job := submitRetried(t, c, jobSpec{name: "patient", share: "QS1", priority: 1}, 1)

	// Unschedulable: given up after 2 s and requeued, again and again.
	testwait.Until(t, 60*time.Second, func() error {
		d := describe(t, c, job)
		if d.Status == types.ServiceJobStatusFailed || d.Status == types.ServiceJobStatusSucceeded {
			return fmt.Errorf("the job ended %s: %q", d.Status, aws.ToString(d.StatusReason))
		}
		if len(d.Attempts) < 2 || d.Attempts[0].StoppedAt == nil {
			return notYet("%d attempts", len(d.Attempts))
		}
		if r := aws.ToString(d.Attempts[0].StatusReason); !strings.HasPrefix(r, "Unschedulable for 2s: 0/") ||
			!strings.Contains(r, "node affinity/selector") {
			return fmt.Errorf("the first attempt ended with %q, want Unschedulable for 2s: 0/N nodes ... node affinity/selector", r)
		}
		return nil
	})
	// A node of the pool appears: the latest attempt runs there.
	kubetest.Nodes(t, cs, pool, "g5.xlarge", 1, 8)
	d := waitStatus(t, c, job, types.ServiceJobStatusRunning)
	before := len(d.Attempts)
	running := attemptID(t, d.Attempts[before-1].ServiceResourceId)
	var victim corev1.Pod
	for _, p := range k.pods(t, job) {
		if podAttempt(t, p) == running && p.Status.Phase == corev1.PodRunning {
			victim = p
		}
	}
	if victim.Name == "" || victim.Spec.NodeName != node {
		t.Fatalf("no pod of the running attempt %s on node %s: %s", running, node, js(k.pods(t, job)))
	}

	// Evicted, as the kubelet reports it.
	const evicted = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Mi. "
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(victim.Namespace).Get(context.Background(), victim.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", evicted
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = false
			p.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "ContainerStatusUnknown", FinishedAt: metav1.Now()}}
		}
		_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	fatalIf(t, "evict "+victim.Name, err)
	testwait.Until(t, 60*time.Second, func() error {
		d := describe(t, c, job)
		if len(d.Attempts) <= before || d.Status != types.ServiceJobStatusRunning {
			return notYet("%s with %d attempts", d.Status, len(d.Attempts))
		}
		if r := aws.ToString(d.Attempts[before-1].StatusReason); r != "Evicted: "+strings.TrimSpace(evicted) {
			return fmt.Errorf("the evicted attempt ended with %q, want Evicted: %s", r, evicted)
		}
		next := attemptID(t, d.Attempts[before].ServiceResourceId)
		for _, p := range k.pods(t, job) {
			if podAttempt(t, p) == next && p.Status.Phase == corev1.PodRunning && p.UID != victim.UID {
				return nil
			}
		}
		return notYet("no running pod of the new attempt %s", next)
	})

	// The console tells where each attempt's instance ran: the evicted pod
	// on its node, and the new one.
	d = describe(t, c, job)
	detail := consoleDetail(t, k.server, job)
	if len(detail.Instances) != len(d.Attempts) {
		t.Fatalf("the console lists instances of %d attempts, want %d", len(detail.Instances), len(d.Attempts))
	}
	if got := detail.Instances[before-1]; len(got) != 1 || got[0].Name != victim.Name || got[0].Node != node || got[0].Phase != "Failed" {
		t.Errorf("the console shows the evicted attempt's instance as %+v, want pod %s on %s, Failed", got, victim.Name, node)
	}
	for _, p := range k.pods(t, job) {
		if podAttempt(t, p) != attemptID(t, d.Attempts[len(d.Attempts)-1].ServiceResourceId) {
			continue
		}
		got := detail.Instances[len(d.Attempts)-1]
		if len(got) != 1 || got[0].Name != p.Name || got[0].Node != p.Spec.NodeName || got[0].Host != "algo-1" {
			t.Errorf("the console shows the running attempt's instance as %+v, want pod %s on %s", got, p.Name, p.Spec.NodeName)
		}
	}
	// So does sharq describe.
	out, err := exec.Command(sharqBin, "describe", "--endpoint", k.url, job[strings.LastIndex(job, "/")+1:]).CombinedOutput()
	if err != nil {
		t.Fatalf("sharq describe: %v\n%s", err, out)
	}
	row := regexp.MustCompile(`(?m)^\s+` + strconv.Itoa(before) + `\s+algo-1\s+` + regexp.QuoteMeta(victim.Name) + `\s+` + regexp.QuoteMeta(node) + `\s+Failed$`)
	if !strings.Contains(string(out), "Pods:") || !row.Match(out) {
		t.Errorf("sharq describe does not list attempt %d's pod %s on %s, Failed:\n%s", before, victim.Name, node, out)
	}
	terminate(t, c, job, "done")
	k.stop()
}

// consoleDetail reads a job's page data from the console's route.
func consoleDetail(t *testing.T, s *server, jobArn string) web.JobDetail {
	t.Helper()
	id := jobArn[strings.LastIndex(jobArn, "/")+1:]
	resp, err := http.Get(s.url + "/sharq/v1/console/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d web.JobDetail
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the console's job detail: %d %v", resp.StatusCode, err)
	}
	return d
}
