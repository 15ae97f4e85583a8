package kube

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// Options configures an Executor.
type Options struct {
	// Config reaches the API server (see LoadConfig).
	Config *rest.Config
	// Namespace names the namespace of an attempt's objects; "{queue}" and
	// "{share}" in it are replaced by the job's queue and quota share
	// (lowercased, made a DNS label). Default "sharq".
	Namespace string
	// Instance names this sharq among others on the cluster (label
	// sharq.dev/instance; default "sharq"): it watches, adopts and deletes
	// only its own objects.
	Instance string
	// Table maps instance types to pod resources and placement.
	Table Table
	// DefaultGrace is the pods' terminationGracePeriodSeconds.
	DefaultGrace time.Duration
	// ForceAfter is how long a pod may outlive its grace period before it
	// is force-deleted (default 30 s).
	ForceAfter time.Duration
	// Unschedulable is how long a pod may stay unschedulable before the
	// attempt is given up and requeued (default 5 min).
	Unschedulable time.Duration
	// KeepEnded is how long the pods of an ended attempt are kept for their
	// logs (default 1 h).
	KeepEnded time.Duration
	// Resync re-examines every attempt this often (default 1 min).
	Resync time.Duration
	// QPS is how many requests a second the executor may send the API
	// server, in bursts of twice that (default 200), unless Config sets its
	// own.
	QPS    int
	Logger *slog.Logger
	// Held, when set, tells whether this server may still act: it leads
	// on a store shared with others. While it does not, the executor
	// creates and deletes nothing; the leader's executor does.
	Held func() bool
	// StagerImage is sharq's own image (examples/kube/Containerfile). When
	// set, each pod gets the SageMaker contract: an init container of it
	// ("sharq __sm stage") writes the host's /opt/ml tree into an emptyDir,
	// restores the checkpoints and stages the channels that are not on a
	// volume, and leaves the sharq binary in another emptyDir, from which
	// "sharq __sm run" wraps the job's command and uploads the model,
	// output data and checkpoints after it (package podhost). "" runs the
	// training image alone: no staging, no uploads.
	StagerImage string
	// S3 is how the pods reach S3.
	S3 PodS3
	// Term is the leadership term this server acts under when it shares
	// its store with others (0: alone, no fencing). Its objects are
	// labelled sharq.dev/term with it; it neither creates, ends nor
	// deletes objects of a higher term, which a newer leader made or
	// claimed.
	Term int64
}

// PodS3 is how the pods reach S3 for channels, models and checkpoints.
// sharq's own access keys never reach a pod.
type PodS3 struct {
	Endpoint  string // "" for AWS's S3
	Region    string
	PathStyle bool
	// Secret names a Secret of the pods' namespace with the keys
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Without it the AWS SDK's
	// default chain applies in the pod: the role of its service account
	// (IRSA's web identity) or of its node.
	Secret string
}

// Table is the instance-type table: what each instance of a type gets.
type Table struct {
	// NodeLabel is the node label that names the instance type when a type
	// has no NodeSelector (default node.kubernetes.io/instance-type, with
	// the type's "ml." prefix dropped).
	NodeLabel string                  `json:"nodeLabel,omitempty"`
	Types     map[string]InstanceType `json:"types"`
	// Volumes back channels and checkpoints.
	Volumes     []Volume     `json:"volumes,omitempty"`
	Checkpoints *Checkpoints `json:"checkpoints,omitempty"`
	// Entrypoints name the ENTRYPOINT of training images, which a pod's
	// wrapper cannot read from the image (Options.StagerImage).
	Entrypoints []ImageEntrypoint `json:"entrypoints,omitempty"`
}

// ImageEntrypoint is the ENTRYPOINT of the images Image names: a payload
// without ContainerEntrypoint runs it with "train" (or its
// ContainerArguments), as SageMaker runs an image. A '*' in Image matches
// any run of characters; the first entry that matches wins.
type ImageEntrypoint struct {
	Image      string   `json:"image"`
	Entrypoint []string `json:"entrypoint"`
}

// entrypointOf is the table's ENTRYPOINT for image, nil when it names none.
func (t Table) entrypointOf(image string) []string {
	for _, e := range t.Entrypoints {
		if imagePattern(e.Image).MatchString(image) {
			return e.Entrypoint
		}
	}
	return nil
}

// imagePattern is a pattern of image names as a regular expression.
func imagePattern(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// InstanceType is one instance of a type as a pod.
type InstanceType struct {
	GPUs         int                 `json:"gpus"`
	CPU          string              `json:"cpu,omitempty"`
	Memory       string              `json:"memory,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// Volume mounts a volume into every pod; channels whose URI starts with
// URIPrefix are read from it.
type Volume struct {
	Name      string              `json:"name"`
	Source    corev1.VolumeSource `json:"source"`
	MountPath string              `json:"mountPath"`
	URIPrefix string              `json:"uriPrefix,omitempty"`
}

// Checkpoints puts each job's checkpoint directory (CheckpointConfig.LocalPath,
// default /opt/ml/checkpoints) on Path/<job ID> of a volume, so that a
// requeued job resumes from it.
type Checkpoints struct {
	Volume string `json:"volume"`
	Path   string `json:"path,omitempty"`
}

// ReadTable reads an instance-type table from a YAML or JSON file.
func ReadTable(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Table{}, err
	}
	var t Table
	if err := yaml.UnmarshalStrict(b, &t); err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := t.validate(); err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t Table) validate() error {
	for name, it := range t.Types {
		for _, q := range []string{it.CPU, it.Memory} {
			if q == "" {
				continue
			}
			if _, err := resource.ParseQuantity(q); err != nil {
				return fmt.Errorf("type %s: %q: %w", name, q, err)
			}
		}
		if it.GPUs < 0 {
			return fmt.Errorf("type %s: negative gpus", name)
		}
	}
	names := map[string]bool{}
	for _, v := range t.Volumes {
		if v.Name == "" || v.MountPath == "" {
			return fmt.Errorf("a volume needs a name and a mountPath")
		}
		names[v.Name] = true
	}
	for _, e := range t.Entrypoints {
		if e.Image == "" || len(e.Entrypoint) == 0 {
			return fmt.Errorf("entrypoints: an entry needs an image and an entrypoint")
		}
	}
	if c := t.Checkpoints; c != nil && !names[c.Volume] {
		return fmt.Errorf("checkpoints: no volume %q", c.Volume)
	}
	return nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Config == nil {
		return o, fmt.Errorf("kube executor: no API server configuration")
	}
	if o.Instance == "" {
		o.Instance = "sharq"
	}
	if o.Namespace == "" {
		o.Namespace = "sharq"
	}
	if o.Table.NodeLabel == "" {
		o.Table.NodeLabel = "node.kubernetes.io/instance-type"
	}
	if o.DefaultGrace <= 0 {
		o.DefaultGrace = 120 * time.Second
	}
	if o.ForceAfter <= 0 {
		o.ForceAfter = 30 * time.Second
	}
	if o.Unschedulable <= 0 {
		o.Unschedulable = 5 * time.Minute
	}
	if o.KeepEnded <= 0 {
		o.KeepEnded = time.Hour
	}
	if o.Resync <= 0 {
		o.Resync = time.Minute
	}
	if o.QPS <= 0 {
		o.QPS = 200
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// fixedNamespace tells whether every attempt goes to one namespace, which
// the executor then watches alone.
func (o Options) fixedNamespace() bool {
	return !strings.Contains(o.Namespace, "{")
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceFor fills the namespace template for a job's queue and share.
func (o Options) namespaceFor(queue, share string) string {
	ns := strings.NewReplacer("{queue}", queue, "{share}", share).Replace(o.Namespace)
	return dnsLabel(ns, 63)
}

// dnsLabel makes s a DNS label of at most n characters.
func dnsLabel(s string, n int) string {
	s = notDNS.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > n {
		s = s[:n]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		s = "x"
	}
	return s
}
