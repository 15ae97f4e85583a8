package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sharq-dev/sharq/internal/executor"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// podIn is a pod in phase with its container in state.
func podIn(phase corev1.PodPhase, state corev1.ContainerState, conds ...corev1.PodCondition) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: phase, Conditions: conds,
		ContainerStatuses: []corev1.ContainerStatus{{Name: containerName, State: state}}}}
}

var (
	pending   = podIn(corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}})
	running   = podIn(corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}})
	succeeded = podIn(corev1.PodSucceeded, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}})
	exit3     = podIn(corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}})
	evicted   = &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}}
	pullBack  = podIn(corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}})
	staging   = withInit(podIn(corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}),
		corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}})
	stageFailed = withInit(podIn(corev1.PodFailed, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}),
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			Message: "ClientError: channel train: s3://b/train/: access denied"}})
	stagerPull = withInit(podIn(corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}),
		corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "sharq:latest not found"}})
	failureFile = podIn(corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error",
		Message: "AlgorithmError: loss is NaN\n"}})
	uploadFailed = podIn(corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		Message: "ClientError: uploading the model: access denied"}})
	noFit = podIn(corev1.PodPending, corev1.ContainerState{}, corev1.PodCondition{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available", LastTransitionTime: metav1.NewTime(t0)})
)

// withInit gives p the stage init container in state.
func withInit(p *corev1.Pod, state corev1.ContainerState) *corev1.Pod {
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: stageContainer, State: state}}
	return p
}

// Ensure an attempt's state is read from its pods as the package doc says.
func TestJudge(t *testing.T) {
	o := Options{Unschedulable: time.Minute, ForceAfter: 30 * time.Second}
	rec := attemptRecord{Hosts: 2}
	for name, tc := range map[string]struct {
		pods     []*corev1.Pod
		rec      attemptRecord
		end      *ending
		arriving bool
		now      time.Duration // after t0
		want     verdict
	}{
		"AnyPending":        {pods: []*corev1.Pod{running, pending}, want: verdict{state: executor.Starting}},
		"AllRunning":        {pods: []*corev1.Pod{running, running}, want: verdict{state: executor.Running}},
		"OneDoneOneRunning": {pods: []*corev1.Pod{succeeded, running}, want: verdict{state: executor.Running}},
		"AllSucceeded":      {pods: []*corev1.Pod{succeeded, succeeded}, want: verdict{state: executor.Succeeded}},
		"NotYetInCache":     {pods: []*corev1.Pod{running, nil}, arriving: true, want: verdict{state: executor.Starting}},
		"DeletedOutside": {pods: []*corev1.Pod{running, nil},
			want: verdict{end: &ending{State: executor.Lost, ExitCode: -1, Reason: "pod of algo-2 deleted outside sharq"}}},
		"ExitCode": {pods: []*corev1.Pod{running, exit3},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: 3, Reason: "exit code 3: Error"}, tailOf: exit3}},
		"Evicted": {pods: []*corev1.Pod{evicted, running},
			want: verdict{end: &ending{State: executor.Lost, ExitCode: -1, Reason: "Evicted: The node was low on resource: memory."}}},
		"ImagePull": {pods: []*corev1.Pod{pullBack, running},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: -1, Reason: "ImagePullBackOff: Back-off pulling image"}}},
		"Staging": {pods: []*corev1.Pod{running, staging}, want: verdict{state: executor.Starting, reason: "Downloading input data"}},
		"StageFailed": {pods: []*corev1.Pod{stageFailed, running},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: 1, Reason: "ClientError: channel train: s3://b/train/: access denied"}}},
		"StagerImagePull": {pods: []*corev1.Pod{stagerPull, running},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: -1, Reason: "ErrImagePull: sharq:latest not found"}}},
		"FailureFile": {pods: []*corev1.Pod{failureFile, running},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: 3, Reason: "exit code 3: AlgorithmError: loss is NaN"}}},
		"UploadFailed": {pods: []*corev1.Pod{uploadFailed, running},
			want: verdict{end: &ending{State: executor.Failed, ExitCode: 1, Reason: "ClientError: uploading the model: access denied"}}},
		"UnschedulableWaits": {pods: []*corev1.Pod{noFit, running}, now: 20 * time.Second,
			want: verdict{state: executor.Starting, wake: 40 * time.Second}},
		"UnschedulableGivesUp": {pods: []*corev1.Pod{noFit, running}, now: time.Minute,
			want: verdict{end: &ending{State: executor.Lost, ExitCode: -1, Reason: "Unschedulable for 1m0s: 0/3 nodes are available"}}},
		"TimeoutWaits": {pods: []*corev1.Pod{running, running}, rec: attemptRecord{Hosts: 2, Timeout: time.Hour}, now: time.Minute,
			want: verdict{state: executor.Running, wake: 59 * time.Minute}},
		"TimeoutStops": {pods: []*corev1.Pod{running, running}, rec: attemptRecord{Hosts: 2, Timeout: time.Hour}, now: time.Hour,
			want: verdict{end: &ending{State: executor.Stopped, ExitCode: -1, Reason: "Attempt duration exceeded"}}},
		"EndingWaitsForPods": {pods: []*corev1.Pod{running, nil}, end: &ending{State: executor.Stopped, At: t0, Grace: 10 * time.Second},
			now: 5 * time.Second, want: verdict{wake: 35 * time.Second}},
		"EndingForces": {pods: []*corev1.Pod{running, nil}, end: &ending{State: executor.Stopped, At: t0, Grace: 10 * time.Second},
			now: 40 * time.Second, want: verdict{force: true, wake: time.Second}},
		"EndedWhenExited": {pods: []*corev1.Pod{exit3, nil}, end: &ending{State: executor.Failed, Reason: "exit code 3", ExitCode: 3},
			want: verdict{state: executor.Failed, reason: "exit code 3", exitCode: 3}},
		"EndedForced": {pods: []*corev1.Pod{nil, nil}, end: &ending{State: executor.Stopped, Reason: "Stopped", Grace: 10 * time.Second, Forced: true},
			want: verdict{state: executor.Stopped, reason: "Stopped: pods force-deleted 30s after their 10s grace period"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := rec
			if tc.rec.Hosts > 0 {
				r = tc.rec
			}
			got := judge(r, tc.end, tc.pods, tc.arriving, t0.Add(tc.now), o)
			if got.state != tc.want.state || got.reason != tc.want.reason || got.exitCode != tc.want.exitCode ||
				got.force != tc.want.force || got.wake != tc.want.wake || got.tailOf != tc.want.tailOf ||
				(got.end == nil) != (tc.want.end == nil) || (got.end != nil && *got.end != *tc.want.end) {
				t.Errorf("judge = %+v (end %+v), want %+v (end %+v)", got, got.end, tc.want, tc.want.end)
			}
		})
	}
}
