package kube

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sharq-dev/sharq/internal/executor"
)

// ending is the decision to end an attempt. It is written on the attempt's
// Service before its pods are deleted, so that a restarted executor
// finishes it; the attempt reports State only once its pods are gone or
// have exited: their capacity is free only then.
type ending struct {
	State    executor.State `json:"state"`
	Reason   string         `json:"reason"`
	ExitCode int            `json:"exitCode"`
	At       time.Time      `json:"at"`
	Grace    time.Duration  `json:"grace"`
	// Forced is set once pods that outlived their grace period were
	// force-deleted.
	Forced bool `json:"forced,omitempty"`
}

// verdict is what an attempt's pods say.
type verdict struct {
	state    executor.State // "" while nothing is to be reported
	reason   string
	exitCode int
	end      *ending       // begin ending the attempt
	tailOf   *corev1.Pod   // the failed pod whose last log lines go into the reason
	force    bool          // force-delete the pods still there
	staging  *corev1.Pod   // the pod whose stage the reason is about
	wake     time.Duration // look again after this long (0: no need)
}

// fatalWaiting are container waiting reasons a pod does not recover from
// without a change of its spec.
var fatalWaiting = map[string]bool{
	"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// lostReasons are pod failures of the cluster's making, not the job's: the
// attempt is requeued without using a retry.
var lostReasons = map[string]bool{"Evicted": true, "NodeLost": true, "Shutdown": true, "Terminated": true,
	"NodeShutdown": true, "UnexpectedAdmissionError": true}

// judge reads an attempt's state from its pods (by host index, nil where a
// pod is not in the cache). arriving tells that missing pods were just
// created and may not be in the cache yet.
func judge(rec attemptRecord, end *ending, pods []*corev1.Pod, arriving bool, now time.Time, o Options) verdict {
	if end != nil {
		return judgeEnding(end, pods, now, o)
	}
	running, succeeded, since := 0, 0, time.Time{}
	var wake time.Duration
	var reason string // while Starting
	var staging *corev1.Pod
	for i, p := range pods {
		if p == nil {
			if arriving {
				continue
			}
			return verdict{end: &ending{State: executor.Lost, ExitCode: -1,
				Reason: fmt.Sprintf("pod of algo-%d deleted outside sharq", i+1)}}
		}
		if p.DeletionTimestamp != nil {
			return verdict{end: &ending{State: executor.Lost, ExitCode: -1,
				Reason: fmt.Sprintf("pod %s deleted outside sharq", p.Name)}}
		}
		switch p.Status.Phase {
		case corev1.PodFailed:
			end, tail := failure(p)
			v := verdict{end: end}
			if tail {
				v.tailOf = p
			}
			return v
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodRunning:
			running++
			if t := startedAt(p); t.After(since) {
				since = t
			}
		default:
			if e := waitingFailure(p); e != nil {
				return verdict{end: e}
			}
			if reason == "" {
				if reason = stageReason(p); reason != "" {
					staging = p
				}
			}
			if t, msg, ok := unschedulable(p); ok {
				if left := t.Add(o.Unschedulable).Sub(now); left > 0 {
					wake = minWake(wake, left)
				} else {
					return verdict{end: &ending{State: executor.Lost, ExitCode: -1,
						Reason: fmt.Sprintf("Unschedulable for %s: %s", o.Unschedulable, msg)}}
				}
			}
		}
	}
	switch n := len(pods); {
	case succeeded == n:
		return verdict{state: executor.Succeeded}
	case running > 0 && running+succeeded == n:
		if rec.Timeout > 0 {
			left := since.Add(rec.Timeout).Sub(now)
			if left <= 0 {
				return verdict{end: &ending{State: executor.Stopped, Reason: "Attempt duration exceeded", ExitCode: -1}}
			}
			wake = minWake(wake, left)
		}
		return verdict{state: executor.Running, wake: wake}
	}
	return verdict{state: executor.Starting, reason: reason, staging: staging, wake: wake}
}

// judgeEnding waits for the pods of an attempt being ended to go, and
// force-deletes those that outlive their grace period by ForceAfter.
func judgeEnding(end *ending, pods []*corev1.Pod, now time.Time, o Options) verdict {
	live := 0
	for _, p := range pods {
		if p != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live++
		}
	}
	if live == 0 {
		reason := end.Reason
		if end.Forced {
			reason += fmt.Sprintf(": pods force-deleted %s after their %s grace period", o.ForceAfter, end.Grace)
		}
		return verdict{state: end.State, reason: reason, exitCode: end.ExitCode}
	}
	left := end.At.Add(end.Grace + o.ForceAfter).Sub(now)
	if left <= 0 {
		return verdict{force: true, wake: time.Second}
	}
	return verdict{wake: left}
}

// failure explains a failed pod: a failed init container's termination
// message (sharq's staging: "ClientError: channel train: ..."), or "exit
// code N: <termination message>" (the job's failure file), or "exit code N:
// Reason" and tail set to add the last log lines; a loss when the cluster
// failed it.
func failure(p *corev1.Pod) (end *ending, tail bool) {
	if lostReasons[p.Status.Reason] {
		return &ending{State: executor.Lost, ExitCode: -1, Reason: join(p.Status.Reason, p.Status.Message)}, false
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			reason := t.Message
			if reason == "" {
				reason = join(fmt.Sprintf("%s: exit code %d", cs.Name, t.ExitCode), t.Reason)
			}
			return &ending{State: executor.Failed, ExitCode: int(t.ExitCode), Reason: strings.TrimSpace(reason)}, false
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil || t.ExitCode == 0 {
			continue
		}
		code := fmt.Sprintf("exit code %d", t.ExitCode)
		switch msg := strings.TrimSpace(t.Message); {
		case sharqFailure(msg):
			return &ending{State: executor.Failed, ExitCode: int(t.ExitCode), Reason: msg}, false
		case msg != "":
			return &ending{State: executor.Failed, ExitCode: int(t.ExitCode), Reason: join(code, msg)}, false
		}
		return &ending{State: executor.Failed, ExitCode: int(t.ExitCode), Reason: join(code, t.Reason)}, true
	}
	return &ending{State: executor.Failed, ExitCode: -1, Reason: join("pod failed", p.Status.Reason, p.Status.Message)}, true
}

// sharqFailure tells whether a termination message is sharq's own (the
// run verb could not start the job or upload its model), whose reason is
// worded as the local executor words it, without an exit code.
func sharqFailure(msg string) bool {
	return strings.HasPrefix(msg, "ClientError: ") || strings.HasPrefix(msg, "CannotStart: ")
}

func waitingFailure(p *corev1.Pod) *ending {
	for _, cs := range append(slices.Clip(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && fatalWaiting[w.Reason] {
			return &ending{State: executor.Failed, ExitCode: -1, Reason: join(w.Reason, w.Message)}
		}
	}
	return nil
}

// stageReason says what a pending pod's init container is doing: staging
// its channels and checkpoints.
func stageReason(p *corev1.Pod) string {
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.Name == stageContainer && cs.State.Running != nil {
			return "Downloading input data"
		}
	}
	return ""
}

// unschedulable tells since when the scheduler could not place p.
func unschedulable(p *corev1.Pod) (time.Time, string, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time, c.Message, true
		}
	}
	return time.Time{}, "", false
}

func startedAt(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(t) {
			t = r.StartedAt.Time
		}
	}
	if t.IsZero() && p.Status.StartTime != nil {
		t = p.Status.StartTime.Time
	}
	return t
}

func minWake(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

// join joins the non-empty parts with ": ".
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
