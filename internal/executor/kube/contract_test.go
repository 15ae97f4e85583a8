package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/podhost"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// withContract turns on the SageMaker contract in pods, with S3 settings,
// a Secret for its keys and a volume that holds s3://team-data/.
func withContract(o *Options) {
	o.StagerImage = "registry.example/sharq:1"
	o.S3 = PodS3{Endpoint: "http://minio.storage:9000", Region: "eu-west-1", PathStyle: true, Secret: "team-s3"}
	o.Table.Volumes = []Volume{{Name: "team-data", MountPath: "/data", URIPrefix: "s3://team-data/",
		Source: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
}

// contractPayload has a channel to stage, one on the volume, an output
// path and checkpoints in S3.
const contractPayload = `{"AlgorithmSpecification":{"TrainingImage":"registry.example/train:1","ContainerEntrypoint":["python","train.py"],"ContainerArguments":["--epochs","3"]},
 "InputDataConfig":[
  {"ChannelName":"train","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://bucket/train/","S3DataDistributionType":"ShardedByS3Key"}}},
  {"ChannelName":"ref","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://team-data/ref/"}}}],
 "OutputDataConfig":{"S3OutputPath":"s3://bucket/out"},
 "CheckpointConfig":{"S3Uri":"s3://bucket/ckpt/"},
 "Environment":{"KWOK_RUN":"2s"}}`

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}

func mountsOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, v := range c.VolumeMounts {
		m[v.MountPath] = v.Name
	}
	return m
}

// checkS3Env checks that a container reaches S3 as configured, its keys
// from the Secret.
func checkS3Env(t *testing.T, pod string, c corev1.Container) {
	t.Helper()
	env := envOf(c)
	for k, v := range map[string]string{podhost.EndpointEnv: "http://minio.storage:9000", podhost.RegionEnv: "eu-west-1", podhost.PathStyleEnv: "true"} {
		if env[k].Value != v {
			t.Errorf("pod %s, container %s: %s=%q, want %q", pod, c.Name, k, env[k].Value, v)
		}
	}
	for k, key := range map[string]string{podhost.AccessKeyEnv: "AWS_ACCESS_KEY_ID", podhost.SecretKeyEnv: "AWS_SECRET_ACCESS_KEY"} {
		ref := env[k].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "team-s3" || ref.SecretKeyRef.Key != key {
			t.Errorf("pod %s, container %s: %s from %+v, want the Secret team-s3's %s", pod, c.Name, k, ref, key)
		}
	}
	if _, ok := env["AWS_ACCESS_KEY_ID"]; ok {
		t.Errorf("pod %s, container %s sets AWS_ACCESS_KEY_ID", pod, c.Name)
	}
}

// Ensure a pod with the contract stages in an init container of sharq's
// image into emptyDirs at /opt/ml and /opt/sharq, tells it its host and
// what to stage (not the channel on a volume), wraps the job's command in
// "sharq __sm run", reports failures through the termination message, and
// reaches S3 as configured; and that such pods run as before.
func TestPodsCarryTheContract(t *testing.T) {
	h := newHarness(t, withContract)
	a := newAttempt("sm", "ml.g5.xlarge", 2, nil)
	a.Payload = []byte(contractPayload)
	h.start(a)
	h.wait("sm", executor.Running, wait)
	pods := h.pods("sm")
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	svc := objectName(executor.Attempt{ID: "sm", JobName: jobName("sm")})
	for _, p := range pods {
		if len(p.Spec.InitContainers) != 1 {
			t.Fatalf("pod %s: %d init containers, want the stage", p.Name, len(p.Spec.InitContainers))
		}
		in, c := p.Spec.InitContainers[0], p.Spec.Containers[0]
		if in.Image != "registry.example/sharq:1" || strings.Join(in.Command, " ") != "/sharq __sm stage --bin /opt/sharq" {
			t.Errorf("pod %s: init container %s runs %v, want sharq's image staging", p.Name, in.Image, in.Command)
		}
		var spec podhost.Spec
		if err := json.Unmarshal([]byte(envOf(in)[podhost.SpecEnv].Value), &spec); err != nil {
			t.Fatalf("pod %s: %s: %v", p.Name, podhost.SpecEnv, err)
		}
		host := p.Labels[labelHost]
		if spec.Hosts[spec.Index].Name != host+"."+svc || len(spec.Hosts) != 2 {
			t.Errorf("pod %s: spec for host %d of %v, want %s", p.Name, spec.Index, spec.Hosts, host)
		}
		if len(spec.Channels) != 1 || spec.Channels[0].Name != "train" || spec.Channels[0].Distribution != "ShardedByS3Key" {
			t.Errorf("pod %s: stages %+v, want only the train channel (ref is on a volume)", p.Name, spec.Channels)
		}
		if spec.ModelURI != "s3://bucket/out/sm/output/model.tar.gz" || spec.CheckpointURI != "s3://bucket/ckpt/" ||
			spec.PartsURI != "s3://bucket/out/sm/output/hosts/" {
			t.Errorf("pod %s: model to %q, checkpoints %q, parts %q", p.Name, spec.ModelURI, spec.CheckpointURI, spec.PartsURI)
		}
		if got := strings.Join(append(c.Command, c.Args...), " "); got != "/opt/sharq/sharq __sm run -- python train.py --epochs 3" {
			t.Errorf("pod %s runs %q, want the job's command wrapped", p.Name, got)
		}
		for _, ctr := range []corev1.Container{in, c} {
			if ctr.TerminationMessagePath != "/dev/termination-log" || ctr.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
				t.Errorf("pod %s, container %s: termination message %s %s", p.Name, ctr.Name, ctr.TerminationMessagePath, ctr.TerminationMessagePolicy)
			}
			checkS3Env(t, p.Name, ctr)
			m := mountsOf(ctr)
			if m["/opt/ml"] != optmlVolume || m["/opt/sharq"] != binVolume {
				t.Errorf("pod %s, container %s mounts %v, want the emptyDirs at /opt/ml and /opt/sharq", p.Name, ctr.Name, m)
			}
		}
		if mountsOf(c)["/data"] != "team-data" {
			t.Errorf("pod %s: the training container mounts %v, want the channel volume at /data", p.Name, mountsOf(c))
		}
		env := envOf(c)
		if env["AWS_ENDPOINT_URL_S3"].Value != "http://minio.storage:9000" || env["S3_ENDPOINT_URL"].Value != "http://minio.storage:9000" {
			t.Errorf("pod %s: AWS_ENDPOINT_URL_S3 %q, S3_ENDPOINT_URL %q, want the S3 endpoint for the job's own calls",
				p.Name, env["AWS_ENDPOINT_URL_S3"].Value, env["S3_ENDPOINT_URL"].Value)
		}
		if env["SM_CHANNEL_TRAIN"].Value != "/opt/ml/input/data/train" || env["SM_CHANNEL_REF"].Value != "/data/ref" {
			t.Errorf("pod %s: SM_CHANNEL_TRAIN %q, SM_CHANNEL_REF %q", p.Name, env["SM_CHANNEL_TRAIN"].Value, env["SM_CHANNEL_REF"].Value)
		}
		if _, ok := envOf(c)[podhost.SpecEnv]; ok {
			t.Errorf("pod %s: the training container carries the spec; it reads the stage's copy", p.Name)
		}
		empty := 0
		for _, v := range p.Spec.Volumes {
			if (v.Name == optmlVolume || v.Name == binVolume) && v.EmptyDir != nil {
				empty++
			}
		}
		if empty != 2 {
			t.Errorf("pod %s: volumes %v, want the two emptyDirs", p.Name, p.Spec.Volumes)
		}
	}
	h.wait("sm", executor.Succeeded, wait)
}

// setStatus changes the status of the attempt's only pod, as a kubelet
// would. The tests use pods no node takes, which kwok leaves alone.
func (h *harness) setStatus(id string, change func(*corev1.PodStatus)) {
	h.t.Helper()
	ctx := context.Background()
	testwait.Until(h.t, wait, func() error {
		pods := h.pods(id)
		if len(pods) == 1 {
			p := pods[0]
			change(&p.Status)
			_, err := h.cs.CoreV1().Pods(h.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{})
			if err == nil {
				return nil
			}
			if !apierrors.IsConflict(err) {
				h.t.Fatal(err)
			}
		}
		return fmt.Errorf("attempt %s: could not set its pod's status", id)
	})
}

// waitFor waits for an update of the attempt that ok accepts.
func (h *harness) waitFor(id string, ok func(executor.Update) bool) executor.Update {
	h.t.Helper()
	var found executor.Update
	testwait.Until(h.t, wait, func() error {
		for _, u := range h.updates(id) {
			if ok(u) {
				found = u
				return nil
			}
		}
		return fmt.Errorf("attempt %s: no such update; got %v", id, h.updates(id))
	})
	return found
}

// pendingStaging is a pod whose stage is running.
func pendingStaging(s *corev1.PodStatus) {
	s.Phase = corev1.PodPending
	s.InitContainerStatuses = []corev1.ContainerStatus{{Name: stageContainer, Image: "registry.example/sharq:1",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	s.ContainerStatuses = []corev1.ContainerStatus{{Name: containerName, Image: "registry.example/train:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

// Ensure a running stage shows as the STARTING reason, and a failed one
// fails the attempt with its termination message.
func TestStageReasonAndFailure(t *testing.T) {
	h := newHarness(t, withContract)
	a := newAttempt("stage", "ml.p5.48xlarge", 1, nil)
	a.Payload = []byte(contractPayload)
	h.start(a)
	h.setStatus("stage", pendingStaging)
	h.waitFor("stage", func(u executor.Update) bool {
		return u.State == executor.Starting && u.Reason == "Downloading input data"
	})
	msg := "ClientError: channel train: s3://bucket/train/: access denied"
	h.setStatus("stage", func(s *corev1.PodStatus) {
		pendingStaging(s)
		s.Phase = corev1.PodFailed
		s.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: msg}}
	})
	u := h.wait("stage", executor.Failed, wait)
	if u.Reason != msg || u.ExitCode != 1 {
		t.Errorf("failed with %d %q, want 1 %q", u.ExitCode, u.Reason, msg)
	}
}

// Ensure the training container's termination message (the job's failure
// file, written by "sharq __sm run") becomes the failure's reason.
func TestTerminationMessageIsTheReason(t *testing.T) {
	h := newHarness(t, withContract)
	a := newAttempt("nan", "ml.p5.48xlarge", 1, nil)
	a.Payload = []byte(contractPayload)
	h.start(a)
	h.setStatus("nan", func(s *corev1.PodStatus) {
		pendingStaging(s)
		s.Phase = corev1.PodFailed
		s.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
		s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 3, Reason: "Error", Message: "AlgorithmError: loss is NaN"}}
	})
	u := h.wait("nan", executor.Failed, wait)
	if u.Reason != "exit code 3: AlgorithmError: loss is NaN" || u.ExitCode != 3 {
		t.Errorf("failed with %d %q, want exit code 3 and the failure file's text", u.ExitCode, u.Reason)
	}
}

// Ensure a payload without ContainerEntrypoint runs its image's ENTRYPOINT
// from the table with "train" (or its arguments), and "train" itself when
// the table names none.
func TestEntrypointOfTheImage(t *testing.T) {
	o := Options{Namespace: "ns", Table: testTable(), DefaultGrace: time.Second, StagerImage: "sharq:1"}
	o.Table.Entrypoints = []ImageEntrypoint{{Image: "*.dkr.ecr.*.amazonaws.com/pytorch-training:*",
		Entrypoint: []string{"bash", "-m", "start_with_right_hostname.sh"}}}
	for name, tc := range map[string]struct{ spec, want string }{
		"TableNamesIt": {`"TrainingImage":"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3-gpu"`,
			"/opt/sharq/sharq __sm run -- bash -m start_with_right_hostname.sh train"},
		"WithArguments": {`"TrainingImage":"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3-gpu","ContainerArguments":["serve"]`,
			"/opt/sharq/sharq __sm run -- bash -m start_with_right_hostname.sh serve"},
		"Unknown": {`"TrainingImage":"registry.example/train:1"`, "/opt/sharq/sharq __sm run --"},
		"PayloadNamesIt": {`"TrainingImage":"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3-gpu","ContainerEntrypoint":["python","t.py"]`,
			"/opt/sharq/sharq __sm run -- python t.py"},
	} {
		t.Run(name, func(t *testing.T) {
			a := newAttempt("ep", "ml.g5.xlarge", 1, nil)
			a.Payload = []byte(`{"AlgorithmSpecification":{` + tc.spec + `}}`)
			s, err := o.build(a)
			if err != nil {
				t.Fatal(err)
			}
			c := s.pods[0].Spec.Containers[0]
			if got := strings.Join(append(c.Command, c.Args...), " "); got != tc.want {
				t.Errorf("runs %q, want %q", got, tc.want)
			}
		})
	}
}

// Ensure the last progress line of a running stage, read from its log, is
// the STARTING reason, and that the pod runs once its stage is done.
// (kwok's stage for KWOK_STAGE pods serves .ci/kube/up's stage log.)
func TestStageProgressIsTheReason(t *testing.T) {
	h := newHarness(t, withContract)
	h.start(newAttempt("progress", "ml.g5.xlarge", 1, map[string]string{"KWOK_STAGE": "3s"}))
	const want = "Downloading input data: channel train for algo-1, 1.5 GiB of 4.0 GiB"
	h.waitFor("progress", func(u executor.Update) bool { return u.State == executor.Starting && u.Reason == want })
	h.wait("progress", executor.Running, wait)
}
