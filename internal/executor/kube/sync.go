package kube

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/podhost"
)

// arrivalWindow is how long after creating pods their absence from the
// cache is taken for the watch lagging, not for a deletion.
const arrivalWindow = 30 * time.Second

func (e *Executor) work() {
	for {
		key, shutdown := e.queue.Get()
		if shutdown {
			return
		}
		err := e.sync(key)
		if err != nil {
			e.log.Warn("kube executor: sync attempt", "attempt", key, "err", err)
			e.queue.AddRateLimited(key)
		} else {
			e.queue.Forget(key)
		}
		e.queue.Done(key)
	}
}

// sync brings one attempt's report and pods in line with what the cluster
// says.
func (e *Executor) sync(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !e.mayAct() {
		return nil // the leader's executor acts
	}
	e.mu.Lock()
	a := e.attempts[key]
	e.mu.Unlock()
	if a == nil {
		return e.syncUnknown(ctx, key)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return nil // Start is still creating it
	}
	e.seeTerm(a)
	if e.fenced(a.term) {
		return nil // a newer leader's executor acts
	}
	now := time.Now()
	if a.reported.Terminal() {
		return e.maybeCleanUp(ctx, a, now)
	}
	arriving := !a.created.IsZero() && now.Sub(a.created) < arrivalWindow
	v := judge(a.rec, a.end, e.podsOf(a), arriving, now, e.opts)
	if v.end != nil {
		v.end.At, v.end.Grace = now, a.rec.Grace
		if v.tailOf != nil {
			v.end.Reason = join(v.end.Reason, e.tail(ctx, v.tailOf))
		}
		return e.beginEnd(ctx, a, v.end)
	}
	if v.force {
		if err := e.forceDelete(ctx, a); err != nil {
			return err
		}
	}
	if a.end != nil && v.state == "" {
		// Pods deleted before a restart may still need their delete.
		if err := e.deletePods(ctx, a, a.end.Grace); err != nil {
			return err
		}
	}
	if v.staging != nil {
		if line := e.stageProgress(ctx, a, v.staging, now); line != "" {
			v.reason = line
		}
		v.wake = minWake(v.wake, stageReadEvery)
	}
	if v.state != "" && (v.state != a.reported || v.state == executor.Starting && v.reason != a.reason) {
		a.reported, a.reason = v.state, v.reason
		e.out.Put(executor.Update{AttemptID: a.rec.ID, JobID: a.rec.JobID, State: v.state,
			Reason: v.reason, ExitCode: v.exitCode, At: now})
		if v.state.Terminal() {
			a.endedAt = now
			e.queue.AddAfter(key, e.opts.KeepEnded)
			return nil
		}
	}
	if v.wake > 0 {
		e.queue.AddAfter(key, v.wake)
	}
	return nil
}

// forceDelete removes the pods that outlived their grace period at once,
// as for a node that is gone.
func (e *Executor) forceDelete(ctx context.Context, a *attempt) error {
	zero := int64(0)
	for _, p := range e.podsOf(a) {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || e.fenced(termOf(p)) {
			continue
		}
		err := e.cs.CoreV1().Pods(a.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("force-delete pod %s/%s: %w", a.ns, p.Name, err)
		}
		e.log.Warn("kube executor: pod force-deleted after its grace period", "pod", a.ns+"/"+p.Name, "attempt", a.rec.ID)
	}
	if !a.end.Forced {
		end := *a.end
		end.Forced = true
		return e.beginEnd(ctx, a, &end)
	}
	return nil
}

// maybeCleanUp deletes an ended attempt's objects once its logs have been
// kept for KeepEnded.
func (e *Executor) maybeCleanUp(ctx context.Context, a *attempt, now time.Time) error {
	if a.endedAt.IsZero() {
		a.endedAt = now // ended before a restart
	}
	if left := a.endedAt.Add(e.opts.KeepEnded).Sub(now); left > 0 {
		e.queue.AddAfter(a.key, left)
		return nil
	}
	if err := e.deleteObjects(ctx, a); err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.attempts, a.key)
	delete(e.byID, a.rec.ID)
	e.mu.Unlock()
	return nil
}

func (e *Executor) deleteObjects(ctx context.Context, a *attempt) error {
	if e.fenced(a.term) {
		return nil
	}
	for _, p := range e.podsOf(a) {
		if p == nil || e.fenced(termOf(p)) {
			continue
		}
		if err := e.cs.CoreV1().Pods(a.ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	err := e.cs.CoreV1().Services(a.ns).Delete(ctx, a.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// syncUnknown adopts an attempt whose Service appeared, and deletes pods
// that no attempt owns (their Service is gone).
func (e *Executor) syncUnknown(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	if s, err := e.svcs.Services(ns).Get(name); err == nil {
		e.adopt(s) // which queues it again
		return nil
	}
	objs, _ := e.pods.GetIndexer().ByIndex(podsByAttempt, key)
	if len(objs) == 0 {
		return nil
	}
	// The Service's watch may lag the pods': only the API server says it
	// is gone.
	s, err := e.cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		e.adopt(s)
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp != nil || e.fenced(termOf(p)) {
			continue
		}
		e.log.Info("kube executor: deleting orphan pod", "pod", p.Namespace+"/"+p.Name)
		if err := e.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// stageReadEvery is how often the log of a pod's stage is read for its
// progress: one request per staging attempt, through the API server to
// the pod's kubelet.
const stageReadEvery = 10 * time.Second

// stageProgress is the last line of a staging pod's init container that
// says what it does ("Downloading input data: channel train for algo-1,
// 1.5 GiB of 4.0 GiB"), read at most every stageReadEvery; "" when it has
// printed none or its log cannot be read. The caller holds a.mu.
func (e *Executor) stageProgress(ctx context.Context, a *attempt, p *corev1.Pod, now time.Time) string {
	if a.progressOf == p.UID && now.Sub(a.progressAt) < stageReadEvery {
		return a.progress
	}
	a.progressOf, a.progressAt, a.progress = p.UID, now, ""
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lines, limit := int64(5), int64(4096)
	r, err := e.cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: stageContainer,
		TailLines: &lines, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	all := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(all) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(all[i]); strings.HasPrefix(line, podhost.ReasonPrefix) {
			a.progress = line
			break
		}
	}
	return a.progress
}

// tail is the last lines a failed pod printed, when the API server can
// give them.
func (e *Executor) tail(ctx context.Context, p *corev1.Pod) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lines, limit := int64(5), int64(2048)
	r, err := e.cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: containerName,
		TailLines: &lines, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return strings.TrimSpace(string(b))
}
