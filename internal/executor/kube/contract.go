package kube

import (
	"encoding/json"
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/podhost"
)

// The SageMaker contract's parts of a pod (Options.StagerImage).
const (
	stageContainer = "sharq-stage"
	optmlVolume    = "sharq-opt-ml"
	binVolume      = "sharq-bin"
	ckptVolume     = "sharq-checkpoints"
	// stagerBinary is the sharq binary in sharq's image.
	stagerBinary = "/sharq"
	// terminationLog is where the stage and run verbs write why they
	// failed, which the container's status then carries.
	terminationLog = "/dev/termination-log"
)

// addContract gives the pod of host h the SageMaker contract: an init
// container of sharq's image stages /opt/ml into an emptyDir and leaves
// the sharq binary in another, which wraps the job's command in the
// training container (see package podhost). Channels on a volume stay
// mounted, not staged.
func (o Options) addContract(p *corev1.Pod, h host) error {
	j := h.j
	spec := podhost.Spec{Request: json.RawMessage(h.a.Payload), Hosts: h.hosts, Index: h.i,
		CheckpointURI: j.CheckpointConfig.S3Uri, ModelURI: optml.ModelURI(j, h.a.ID),
		OutputURI: optml.OutputURI(j, h.a.ID), Compressed: optml.Compressed(j)}
	if p := optml.OutputPrefix(j, h.a.ID); p != "" && len(h.hosts) > 1 {
		spec.PartsURI = p + "/hosts/"
	}
	onVolume := o.channels(j)
	for _, c := range optml.Channels(j) {
		if _, ok := onVolume[c.Name]; !ok {
			spec.Channels = append(spec.Channels, c)
		}
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	s3 := o.s3Env()
	shared := []corev1.VolumeMount{{Name: optmlVolume, MountPath: optml.Root}, {Name: binVolume, MountPath: podhost.DefaultBin}}
	p.Spec.Volumes = append(p.Spec.Volumes,
		corev1.Volume{Name: optmlVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: binVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c := &p.Spec.Containers[0]
	// The checkpoints are restored where the job finds them: on the
	// table's checkpoint volume, in the /opt/ml emptyDir, or in an
	// emptyDir of their own at a LocalPath outside /opt/ml.
	ckpt := optml.CheckpointPath(j)
	var ckptMount *corev1.VolumeMount
	for _, m := range c.VolumeMounts {
		if m.MountPath == ckpt {
			ckptMount = &m
		}
	}
	if _, inTree := optml.UnderRoot(ckpt); ckptMount == nil && !inTree {
		ckptMount = &corev1.VolumeMount{Name: ckptVolume, MountPath: ckpt}
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: ckptVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		c.VolumeMounts = append(c.VolumeMounts, *ckptMount)
	}
	initMounts := append([]corev1.VolumeMount{}, shared...)
	if ckptMount != nil {
		initMounts = append(initMounts, *ckptMount)
	}
	// Staging takes what the instance has, which costs the pod nothing:
	// its request is the larger of its init and training containers'.
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Limits[name]; ok {
			res.Requests[name], res.Limits[name] = q, q
		}
	}
	p.Spec.InitContainers = []corev1.Container{{
		Name: stageContainer, Image: o.StagerImage,
		Command:                  []string{stagerBinary, podhost.Arg, "stage", "--bin", podhost.DefaultBin},
		Env:                      append([]corev1.EnvVar{{Name: podhost.SpecEnv, Value: string(raw)}}, s3...),
		VolumeMounts:             initMounts,
		Resources:                res,
		TerminationMessagePath:   terminationLog,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}}
	if len(c.Command) == 0 {
		// As SageMaker runs an image: its ENTRYPOINT with "train", or
		// with ContainerArguments in place of "train". Without the table's
		// ENTRYPOINT, the wrapper runs "train" (or the arguments) itself.
		if ep := o.Table.entrypointOf(c.Image); ep != nil {
			c.Command = ep
			if len(c.Args) == 0 {
				c.Args = []string{"train"}
			}
		}
	}
	c.Command = append([]string{path.Join(podhost.DefaultBin, podhost.BinName), podhost.Arg, "run", "--"}, c.Command...)
	c.Env = append(c.Env, s3...)
	c.VolumeMounts = append(c.VolumeMounts, shared...)
	c.TerminationMessagePath = terminationLog
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	return nil
}

// s3Env tells the stage and run verbs how to reach S3: the settings, and
// the access keys from the Secret when one is named.
func (o Options) s3Env() []corev1.EnvVar {
	var env []corev1.EnvVar
	if o.S3.Endpoint != "" {
		env = append(env, corev1.EnvVar{Name: podhost.EndpointEnv, Value: o.S3.Endpoint})
	}
	if o.S3.Region != "" {
		env = append(env, corev1.EnvVar{Name: podhost.RegionEnv, Value: o.S3.Region})
	}
	env = append(env, corev1.EnvVar{Name: podhost.PathStyleEnv, Value: strconv.FormatBool(o.S3.PathStyle)})
	if o.S3.Secret == "" {
		return env
	}
	key := func(name, k string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.S3.Secret}, Key: k}}}
	}
	return append(env, key(podhost.AccessKeyEnv, "AWS_ACCESS_KEY_ID"), key(podhost.SecretKeyEnv, "AWS_SECRET_ACCESS_KEY"))
}
