package podhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sharq-dev/sharq/internal/optml"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
	"github.com/sharq-dev/sharq/internal/testwait"
	"github.com/sharq-dev/sharq/internal/trainingjob"
)

// selfEnv makes the test binary run Main, standing for the sharq binary in
// a pod, so that signals reach a real process.
const selfEnv = "SHARQ_PODHOST_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(selfEnv) == "1" {
		os.Exit(Main(os.Args[2:])) // after "__sm"
	}
	os.Exit(m.Run())
}

// world is an S3 server with a bucket, and a payload that uses it.
type world struct {
	t        *testing.T
	endpoint string
	c        *s3.Client
	bucket   string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	endpoint, _ := s3test.Start(t)
	w := &world{t: t, endpoint: endpoint, c: s3test.Client(endpoint), bucket: "data"}
	s3test.Bucket(t, w.c, w.bucket)
	return w
}

// env is a pod's environment: the S3 settings and keys, and the spec.
func (w *world) env(s Spec) []string {
	raw, err := json.Marshal(s)
	if err != nil {
		w.t.Fatal(err)
	}
	return []string{EndpointEnv + "=" + w.endpoint, RegionEnv + "=" + s3test.Region, PathStyleEnv + "=true",
		AccessKeyEnv + "=testing", SecretKeyEnv + "=testing", SpecEnv + "=" + string(raw), "PATH=" + os.Getenv("PATH")}
}

// spec is host index of hosts of the request payload, with the URIs the
// kube executor gives it.
func (w *world) spec(payload string, index, hosts int) Spec {
	w.t.Helper()
	r, err := trainingjob.ParseString(payload)
	if err != nil {
		w.t.Fatal(err)
	}
	s := Spec{Request: json.RawMessage(payload), Index: index, Channels: optml.Channels(r),
		CheckpointURI: r.CheckpointConfig.S3Uri, ModelURI: optml.ModelURI(r, "job-1"),
		OutputURI: optml.OutputURI(r, "job-1"), Compressed: optml.Compressed(r)}
	for i := range hosts {
		s.Hosts = append(s.Hosts, optml.Host{Name: fmt.Sprintf("algo-%d", i+1), Type: "ml.g5.xlarge"})
	}
	return s
}

func (w *world) payload(extra string) string {
	return `{"AlgorithmSpecification":{"TrainingImage":"img","TrainingInputMode":"File"},
	"HyperParameters":{"epochs":"3"},
	"InputDataConfig":[
	 {"ChannelName":"train","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://` + w.bucket + `/train/","S3DataDistributionType":"ShardedByS3Key"}}},
	 {"ChannelName":"eval","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://` + w.bucket + `/eval/"}}}],
	"OutputDataConfig":{"S3OutputPath":"s3://` + w.bucket + `/out"},
	"CheckpointConfig":{"S3Uri":"s3://` + w.bucket + `/ckpt/"}` + extra + `}`
}

func (w *world) get(key string) ([]byte, error) {
	out, err := w.c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &w.bucket, Key: &key})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Ensure stage writes the host's tree, stages its shard of a sharded
// channel and all of a replicated one, and leaves the binary and the spec
// for the training container.
func TestStageWritesTheTreeAndStagesChannels(t *testing.T) {
	w := newWorld(t)
	for _, k := range []string{"train/a", "train/b", "train/c", "train/d", "eval/x"} {
		s3test.Put(t, w.c, w.bucket, k, []byte(k))
	}
	root, bin, term := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "term")
	s := w.spec(w.payload(""), 1, 2)
	var out bytes.Buffer
	if code := stageMain(context.Background(), []string{"--root", root, "--bin", bin, "--termination-log", term}, w.env(s), &out); code != 0 {
		t.Fatalf("stage exited %d", code)
	}
	// Its last line for each channel is the whole of the host's part.
	for _, want := range []string{"Downloading input data: channel train for algo-2, 14 B of 14 B\n",
		"Downloading input data: channel eval for algo-2, 6 B of 6 B\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the stage printed %q, want a line %q", out.String(), want)
		}
	}
	var rc struct {
		CurrentHost string   `json:"current_host"`
		Hosts       []string `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(read(t, filepath.Join(root, "input/config/resourceconfig.json"))), &rc); err != nil {
		t.Fatal(err)
	}
	if rc.CurrentHost != "algo-2" || len(rc.Hosts) != 2 {
		t.Errorf("resourceconfig.json %+v, want algo-2 of 2 hosts", rc)
	}
	for path, want := range map[string]string{"input/data/train/b": "train/b", "input/data/train/d": "train/d", "input/data/eval/x": "eval/x"} {
		if got := read(t, filepath.Join(root, path)); got != want {
			t.Errorf("%s holds %q, want %q", path, got, want)
		}
	}
	for _, p := range []string{"input/data/train/a", "input/data/train/c"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s was staged on algo-2: a sharded channel gives it the other half", p)
		}
	}
	for _, d := range []string{"model", "output/data", "checkpoints"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || fi.Mode().Perm() != 0o777 {
			t.Errorf("%s: %v %v, want a directory any user of the job may write", d, fi, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(bin, BinName)); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the binary in --bin: %v %v, want an executable copy", fi, err)
	}
	var back Spec
	if err := json.Unmarshal([]byte(read(t, filepath.Join(bin, SpecName))), &back); err != nil || back.Index != 1 {
		t.Errorf("the spec in --bin: %+v %v, want host 1's", back, err)
	}
}

// Ensure a channel that cannot be read fails the stage with the channel,
// its URI and why, as the container's termination message.
func TestStageFailureIsTheTerminationMessage(t *testing.T) {
	w := newWorld(t)
	term := filepath.Join(t.TempDir(), "term")
	payload := `{"AlgorithmSpecification":{"TrainingImage":"img"},"InputDataConfig":[
	 {"ChannelName":"train","DataSource":{"S3DataSource":{"S3DataType":"S3Prefix","S3Uri":"s3://nobucket/train/"}}}]}`
	code := StageMain(context.Background(), []string{"--root", t.TempDir(), "--termination-log", term}, w.env(w.spec(payload, 0, 1)))
	if code != 1 {
		t.Errorf("stage exited %d, want 1", code)
	}
	if got := read(t, term); got != "ClientError: channel train: s3://nobucket/train/: bucket nobucket does not exist" {
		t.Errorf("termination message %q", got)
	}
}

// Ensure run runs the job, uploads algo-1's model and output data as
// tar.gz and its checkpoints, and that a second attempt's stage restores
// those checkpoints.
func TestRunUploadsAndTheNextStageRestores(t *testing.T) {
	w := newWorld(t)
	s3test.Put(t, w.c, w.bucket, "train/a", []byte("a"))
	s3test.Put(t, w.c, w.bucket, "eval/x", []byte("x"))
	s := w.spec(w.payload(""), 0, 1)
	root, term := t.TempDir(), filepath.Join(t.TempDir(), "term")
	env := w.env(s)
	if code := StageMain(context.Background(), []string{"--root", root}, env); code != 0 {
		t.Fatalf("stage exited %d", code)
	}
	job := `test "$(cat input/data/train/a)" = a && echo weights > model/w.bin && echo m > output/data/metrics && echo step7 > checkpoints/ckpt && test -z "$` + AccessKeyEnv + `"`
	code := RunMain(context.Background(), []string{"--root", root, "--termination-log", term, "--", "sh", "-c", "cd " + root + " && " + job}, env)
	if code != 0 {
		t.Fatalf("run exited %d (%s)", code, readIf(term))
	}
	model, err := w.get("out/job-1/output/model.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if got := s3test.Untar(t, model); got["w.bin"] != "weights\n" {
		t.Errorf("model.tar.gz holds %v, want w.bin", got)
	}
	output, err := w.get("out/job-1/output/output.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if got := s3test.Untar(t, output); got["metrics"] != "m\n" {
		t.Errorf("output.tar.gz holds %v, want metrics", got)
	}
	if b, err := w.get("ckpt/ckpt"); err != nil || string(b) != "step7\n" {
		t.Errorf("checkpoint %q (%v), want step7", b, err)
	}
	// The next attempt, on a fresh pod.
	root2 := t.TempDir()
	if code := StageMain(context.Background(), []string{"--root", root2}, env); code != 0 {
		t.Fatalf("second stage exited %d", code)
	}
	if got := read(t, filepath.Join(root2, "checkpoints/ckpt")); got != "step7\n" {
		t.Errorf("restored checkpoint %q, want step7", got)
	}
}

func readIf(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Ensure a failing job's failure file becomes the termination message and
// its exit code the container's, and its model is not uploaded.
func TestRunReportsTheFailureFile(t *testing.T) {
	w := newWorld(t)
	s := w.spec(w.payload(""), 0, 1)
	s.Channels = nil
	root, term := t.TempDir(), filepath.Join(t.TempDir(), "term")
	env := w.env(s)
	if code := StageMain(context.Background(), []string{"--root", root}, env); code != 0 {
		t.Fatalf("stage exited %d", code)
	}
	job := "echo weights > model/w.bin; printf 'AlgorithmError: loss is NaN' > output/failure; exit 3"
	code := RunMain(context.Background(), []string{"--root", root, "--termination-log", term, "--", "sh", "-c", "cd " + root + " && " + job}, env)
	if code != 3 {
		t.Errorf("run exited %d, want the job's 3", code)
	}
	if got := read(t, term); got != "AlgorithmError: loss is NaN" {
		t.Errorf("termination message %q, want the failure file's text", got)
	}
	if _, err := w.get("out/job-1/output/model.tar.gz"); err == nil {
		t.Error("a failed job's model was uploaded")
	}
	if _, err := w.get("out/job-1/output/output.tar.gz"); err != nil {
		t.Errorf("a failed job's output data: %v, want it uploaded", err)
	}
}

// Ensure a model that cannot be uploaded fails a job that succeeded, with
// a ClientError, and that hosts other than algo-1 upload nothing.
func TestRunUploadFailure(t *testing.T) {
	w := newWorld(t)
	s := w.spec(w.payload(""), 0, 2)
	s.Channels, s.CheckpointURI, s.OutputURI = nil, "", ""
	s.ModelURI = "s3://nobucket/job-1/output/model.tar.gz"
	root, term := t.TempDir(), filepath.Join(t.TempDir(), "term")
	code := RunMain(context.Background(), []string{"--root", root, "--termination-log", term, "--", "true"}, w.env(s))
	if code != 1 || !strings.HasPrefix(read(t, term), "ClientError: uploading the model: upload s3://nobucket/") {
		t.Errorf("run exited %d with %q, want 1 and a ClientError", code, readIf(term))
	}
	s.Index = 1
	term2 := filepath.Join(t.TempDir(), "term")
	if code := RunMain(context.Background(), []string{"--root", root, "--termination-log", term2, "--", "true"}, w.env(s)); code != 0 {
		t.Errorf("algo-2 exited %d (%s), want 0: it uploads nothing", code, readIf(term2))
	}
}

// Ensure SIGTERM reaches the job, whose checkpoint written on the way out
// is saved, and that a stopped job's model and output data are not.
func TestRunForwardsSIGTERMAndSavesCheckpoints(t *testing.T) {
	w := newWorld(t)
	s := w.spec(w.payload(""), 0, 1)
	s.Channels = nil
	root, bin := t.TempDir(), t.TempDir()
	env := w.env(s)
	if code := StageMain(context.Background(), []string{"--root", root, "--bin", bin}, env); code != 0 {
		t.Fatalf("stage exited %d", code)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	job := `trap 'echo saved > checkpoints/last; exit 143' TERM; echo w > model/w; touch ` + ready + `; while :; do sleep 0.1; done`
	cmd := exec.Command(filepath.Join(bin, BinName), Arg, "run", "--root", root, "--spec", filepath.Join(bin, SpecName),
		"--termination-log", "", "--", "sh", "-c", "cd "+root+" && "+job)
	// The copied test binary runs Main; the spec comes from --bin.
	cmd.Env = []string{selfEnv + "=1"}
	for _, kv := range env {
		if !strings.HasPrefix(kv, SpecEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := testwait.For(30*time.Second, func() error { _, err := os.Stat(ready); return err }); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the job did not start: %s", out.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("run exited %d (%v), want the job's 143: %s", code, err, out.String())
	}
	if b, err := w.get("ckpt/last"); err != nil || string(b) != "saved\n" {
		t.Errorf("checkpoint written on SIGTERM: %q (%v), want it saved", b, err)
	}
	if _, err := w.get("out/job-1/output/model.tar.gz"); err == nil {
		t.Error("a stopped job's model was uploaded")
	}
}

// Ensure the hosts of a job of two make one model archive and one output
// archive of both hosts' files (algo-2's winning a name both hold, as the
// local executor merges), whichever ends first, and leave no parts.
func TestRunMergesTheHosts(t *testing.T) {
	pollEvery = 20 * time.Millisecond
	w := newWorld(t)
	payload := `{"AlgorithmSpecification":{"TrainingImage":"img"},"OutputDataConfig":{"S3OutputPath":"s3://` + w.bucket + `/out"}}`
	codes := make(chan int, 2)
	for i, job := range []string{
		"echo a > model/a && echo one > model/same && echo 1 > output/data/m1",
		"sleep 0.5 && echo b > model/b && echo two > model/same && echo 2 > output/data/m2",
	} {
		s := w.spec(payload, i, 2)
		s.PartsURI = "s3://" + w.bucket + "/out/job-1/output/hosts/"
		root := t.TempDir()
		env := w.env(s)
		if code := StageMain(context.Background(), []string{"--root", root}, env); code != 0 {
			t.Fatalf("stage of algo-%d exited %d", i+1, code)
		}
		term := filepath.Join(t.TempDir(), "term")
		go func() {
			code := RunMain(context.Background(), []string{"--root", root, "--termination-log", term, "--", "sh", "-c", "cd " + root + " && " + job}, env)
			if code != 0 {
				t.Errorf("algo-%d exited %d: %s", i+1, code, readIf(term))
			}
			codes <- code
		}()
	}
	<-codes
	<-codes
	model, err := w.get("out/job-1/output/model.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s3test.Untar(t, model), map[string]string{"a": "a\n", "b": "b\n", "same": "two\n"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("model.tar.gz holds %v, want %v", got, want)
	}
	output, err := w.get("out/job-1/output/output.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if got := s3test.Untar(t, output); got["m1"] != "1\n" || got["m2"] != "2\n" {
		t.Errorf("output.tar.gz holds %v, want both hosts' files", got)
	}
	prefix := "out/job-1/output/hosts/"
	list, err := w.c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &w.bucket, Prefix: &prefix})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != 0 {
		t.Errorf("%d objects left under the parts' prefix, want none", len(list.Contents))
	}
}
