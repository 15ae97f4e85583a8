package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// Labels and annotations on sharq's objects.
const (
	labelManaged   = "app.kubernetes.io/managed-by"
	managedBy      = "sharq"
	labelAttempt   = "sharq.dev/attempt"  // the attempt's key (objectName)
	labelJob       = "sharq.dev/job"      // the job ID, when it is a valid label value
	labelHost      = "sharq.dev/host"     // algo-1 ... algo-N
	labelInstance  = "sharq.dev/instance" // Options.Instance
	labelTerm      = "sharq.dev/term"     // the leadership term the objects were created or last claimed under
	annotAttempt   = "sharq.dev/attempt"  // the record: attemptRecord as JSON
	annotEnding    = "sharq.dev/ending"   // why the attempt is being ended: ending as JSON
	containerName  = "algo"
	checkpointPath = "/opt/ml/checkpoints"
)

// attemptRecord is what the executor keeps of an attempt on its Service, so
// that a restarted executor knows it again.
type attemptRecord struct {
	ID    string        `json:"id"`
	JobID string        `json:"jobID"`
	Hosts int           `json:"hosts"`
	Grace time.Duration `json:"grace"`
	// GraceSet tells that the payload set Grace (SHARQ_STOP_GRACE_SECONDS):
	// it then overrides the grace period Stop is given.
	GraceSet bool          `json:"graceSet,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
}

// objectName names an attempt's Service and, with "-algo-N", its pods: a
// DNS label made of the job name and a hash of the attempt ID, so that
// every create is idempotent by attempt ID.
func objectName(a executor.Attempt) string {
	sum := sha256.Sum256([]byte(a.ID))
	return dnsLabel(a.JobName, 30) + "-" + hex.EncodeToString(sum[:8])
}

// spec is an attempt turned into Kubernetes objects.
type spec struct {
	rec  attemptRecord
	ns   string
	name string
	term int64
	svc  *corev1.Service
	pods []*corev1.Pod
}

// build turns an attempt into its Service and pods. An error means the
// attempt cannot run as asked (executor.Permanent).
func (o Options) build(a executor.Attempt) (*spec, error) {
	j, err := a.ReadRequest()
	if err != nil {
		return nil, err
	}
	image := j.AlgorithmSpecification.TrainingImage
	if image == "" {
		return nil, fmt.Errorf("no AlgorithmSpecification.TrainingImage in the payload")
	}
	grace, graceSet, err := j.StopGrace()
	if err != nil {
		return nil, err
	}
	if !graceSet {
		grace = o.DefaultGrace
		if a.Grace > 0 {
			grace = a.Grace
		}
	}
	types := hostTypes(a, j)
	if len(types) == 0 {
		return nil, fmt.Errorf("no instances to run: no ResourceConfig in the payload")
	}
	s := &spec{ns: o.namespaceFor(a.Queue, a.Share), name: objectName(a), term: max(a.Term, o.Term)}
	s.rec = attemptRecord{ID: a.ID, JobID: a.JobID, Hosts: len(types), Grace: grace, GraceSet: graceSet,
		Timeout: timeout(a.Timeout, j.StoppingCondition.MaxRuntimeInSeconds)}
	rec, _ := json.Marshal(s.rec)
	labels := s.labels(a)
	labels[labelInstance] = o.Instance
	labels[labelTerm] = strconv.FormatInt(s.term, 10)
	// The Service is the attempt's record and owns its pods. Headless and
	// selecting them, it gives the pods of a multi-instance attempt DNS
	// names (SM_HOSTS). A single instance needs none: it is "algo-1", as on
	// SageMaker, which its own /etc/hosts resolves; and a Service that
	// selects it would cost kube-scheduler, whose default topology spreading
	// matches every pod against every Service of its namespace.
	s.svc = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.ns, Labels: labels,
			Annotations: map[string]string{annotAttempt: string(rec)}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true},
	}
	hosts := []string{"algo-1"}
	if len(types) > 1 {
		s.svc.Spec.Selector = map[string]string{labelAttempt: s.name}
		hosts = make([]string, len(types))
		for i := range types {
			hosts[i] = "algo-" + strconv.Itoa(i+1) + "." + s.name
		}
	}
	ohosts := make([]optml.Host, len(types))
	for i, typ := range types {
		ohosts[i] = optml.Host{Name: hosts[i], Type: typ}
	}
	for i, typ := range types {
		it, ok := o.Table.Types[typ]
		if !ok {
			return nil, fmt.Errorf("instance type %q is not in the instance-type table", typ)
		}
		h := host{a: a, j: j, hosts: ohosts, i: i, it: it}
		p, err := o.pod(s, labels, h, image, grace)
		if err != nil {
			return nil, err
		}
		s.pods = append(s.pods, p)
	}
	return s, nil
}

// host is one instance of an attempt, for its pod.
type host struct {
	a     executor.Attempt
	j     *trainingjob.Request
	hosts []optml.Host // by the names the hosts reach each other by
	i     int
	it    InstanceType
}

func (h host) name() string { return "algo-" + strconv.Itoa(h.i+1) }

// termOf is the term an object of sharq's was created or claimed under (0
// when it carries none).
func termOf(o metav1.Object) int64 {
	t, err := strconv.ParseInt(o.GetLabels()[labelTerm], 10, 64)
	if err != nil || t < 0 {
		return 0
	}
	return t
}

func (s *spec) labels(a executor.Attempt) map[string]string {
	l := map[string]string{labelManaged: managedBy, labelAttempt: s.name}
	if a.JobID != "" && dnsLabel(a.JobID, 63) == strings.ToLower(a.JobID) {
		l[labelJob] = a.JobID
	}
	return l
}

// pod is the attempt's instance h.
func (o Options) pod(s *spec, labels map[string]string, h host, image string, grace time.Duration) (*corev1.Pod, error) {
	name := h.name()
	pl := map[string]string{labelHost: name}
	for k, v := range labels {
		pl[k] = v
	}
	res, err := h.it.resources()
	if err != nil {
		return nil, err
	}
	graceSecs := int64(math.Ceil(grace.Seconds()))
	c := corev1.Container{
		Name: containerName, Image: image,
		// Copies: the request is read-only, the pod the client's.
		Command: slices.Clone(h.j.AlgorithmSpecification.ContainerEntrypoint), Args: slices.Clone(h.j.AlgorithmSpecification.ContainerArguments),
		Env:       o.hostEnv(h),
		Resources: res,
	}
	mounts, vols := o.volumes(h.j, s.rec.JobID)
	c.VolumeMounts = mounts
	selector := h.it.NodeSelector
	if selector == nil {
		selector = map[string]string{o.Table.NodeLabel: strings.TrimPrefix(h.hosts[h.i].Type, "ml.")}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-" + name, Namespace: s.ns, Labels: pl,
			Annotations: map[string]string{annotAttempt: s.svc.Annotations[annotAttempt]}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{c}, Volumes: vols,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &graceSecs,
			Hostname:                      name, Subdomain: s.name,
			NodeSelector: selector, Tolerations: h.it.Tolerations,
			AutomountServiceAccountToken: new(bool),
		},
	}
	if o.StagerImage != "" {
		if err := o.addContract(p, h); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (it InstanceType) resources() (corev1.ResourceRequirements, error) {
	r := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: it.CPU, corev1.ResourceMemory: it.Memory} {
		if q == "" {
			continue
		}
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return corev1.ResourceRequirements{}, err
		}
		r[name] = v
	}
	if it.GPUs > 0 {
		r["nvidia.com/gpu"] = *resource.NewQuantity(int64(it.GPUs), resource.DecimalSI)
	}
	// Requests equal to limits: the pod gets what the instance type promises.
	return corev1.ResourceRequirements{Requests: r, Limits: r.DeepCopy()}, nil
}

// hostEnv is the environment of host h: optml.Env with the pod's paths
// (channels on a volume at their place there), and its CPUs and GPUs.
func (o Options) hostEnv(h host) []corev1.EnvVar {
	onVolume := map[string]string{}
	for name, p := range o.channels(h.j) {
		onVolume["SM_CHANNEL_"+strings.ToUpper(name)] = p
	}
	job := optml.Job{Name: h.a.ID, Arn: h.a.TrainingJobArn, Region: regionOf(h.a.TrainingJobArn)}
	var env []corev1.EnvVar
	if e := o.S3.Endpoint; e != "" {
		// Where S3 is, for the job's own S3 calls (the AWS SDKs and the
		// training toolkit read these), as the local executor says it;
		// before the payload's Environment, which wins.
		env = append(env, corev1.EnvVar{Name: "AWS_ENDPOINT_URL_S3", Value: e}, corev1.EnvVar{Name: "S3_ENDPOINT_URL", Value: e})
	}
	for _, v := range optml.Env(h.j, h.hosts, h.i, optml.Root, job) {
		if p, ok := onVolume[v.Name]; ok {
			v.Value = p
		}
		env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
	}
	return append(env,
		corev1.EnvVar{Name: "SM_NUM_GPUS", Value: strconv.Itoa(h.it.GPUs)},
		corev1.EnvVar{Name: "SM_NUM_CPUS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
			ContainerName: containerName, Resource: "limits.cpu"}}})
}

// regionOf is the region of an ARN, "" when it has none.
func regionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

// channels maps channel names to paths in the pod: a channel whose URI (or
// file-system directory) starts with a volume's uriPrefix is read from that
// volume.
func (o Options) channels(j *trainingjob.Request) map[string]string {
	ch := map[string]string{}
	for _, c := range j.InputDataConfig {
		uri := ""
		switch ds := c.DataSource; {
		case ds.FileSystemDataSource != nil:
			uri = ds.FileSystemDataSource.DirectoryPath
		case ds.S3DataSource != nil:
			uri = ds.S3DataSource.S3Uri
		}
		for _, v := range o.Table.Volumes {
			if v.URIPrefix != "" && strings.HasPrefix(uri, v.URIPrefix) {
				ch[c.ChannelName] = path.Join(v.MountPath, strings.TrimPrefix(uri, v.URIPrefix))
				break
			}
		}
	}
	return ch
}

// volumes mounts the table's volumes and the job's checkpoint directory.
func (o Options) volumes(j *trainingjob.Request, jobID string) ([]corev1.VolumeMount, []corev1.Volume) {
	var mounts []corev1.VolumeMount
	var vols []corev1.Volume
	for _, v := range o.Table.Volumes {
		vols = append(vols, corev1.Volume{Name: v.Name, VolumeSource: v.Source})
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath})
	}
	if c := o.Table.Checkpoints; c != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: c.Volume, MountPath: checkpointDir(j),
			SubPath: path.Join(c.Path, dnsLabel(jobID, 63))})
	}
	return mounts, vols
}

func checkpointDir(j *trainingjob.Request) string {
	if j.CheckpointConfig.LocalPath != "" {
		return j.CheckpointConfig.LocalPath
	}
	return checkpointPath
}

// hostTypes lists each host's instance type: the dispatched capacity, else
// the payload's ResourceConfig.
func hostTypes(a executor.Attempt, j *trainingjob.Request) []string {
	var types []string
	for _, in := range a.Instances {
		for range in.Count {
			types = append(types, in.Type)
		}
	}
	if len(types) > 0 || j.ResourceConfig == nil {
		return types
	}
	n := 1
	if c := j.ResourceConfig.InstanceCount; c != nil {
		n = max(*c, 1)
	}
	for range n {
		types = append(types, j.ResourceConfig.InstanceType)
	}
	return types
}

// timeout is the shorter of the attempt's timeout and MaxRuntimeInSeconds.
func timeout(attempt time.Duration, maxRuntime int64) time.Duration {
	t := attempt
	if maxRuntime > 0 && maxRuntime < math.MaxInt64/int64(time.Second) {
		if m := time.Duration(maxRuntime) * time.Second; t <= 0 || m < t {
			t = m
		}
	}
	return max(t, 0)
}
