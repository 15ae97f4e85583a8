package local

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sharq-dev/sharq/internal/executor"
	"github.com/sharq-dev/sharq/internal/s3data"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// s3Harness is an executor whose jobs read and write a real S3 server.
type s3Harness struct {
	*harness
	s3     *s3.Client
	bucket string
}

func newS3Harness(t *testing.T, endpoint string, opts Options) *s3Harness {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	d, err := s3data.New(t.Context(), s3data.Config{Endpoint: endpoint, PathStyle: true, Region: s3test.Region,
		Credentials: s3test.Credentials(), CacheDir: filepath.Join(opts.DataDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	opts.Data = d
	return &s3Harness{harness: newHarness(t, opts), s3: s3test.Client(endpoint), bucket: "jobs"}
}

func (h *s3Harness) put(t *testing.T, key, body string) {
	t.Helper()
	_, err := h.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
}

func (h *s3Harness) get(t *testing.T, key string) []byte {
	t.Helper()
	out, err := h.s3.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", h.bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func makeBucket(t *testing.T, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
}

// untarFile reads a tar.gz file into a map of file names to contents.
func untarFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s3test.Untar(t, b)
}

// Ensure a job gets the SageMaker contract: its S3 channel staged under
// /opt/ml/input/data, the three config files, its hyperparameters as
// given, and its model and output data archived to the output path.
func TestContractS3(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/train/a.csv", "1,2\n")
	h.put(t, "data/train/sub/b.csv", "3,4\n")
	j := sh(`set -e
cd /opt/ml 2>/dev/null || cd "$(dirname "$SM_MODEL_DIR")"
cp input/config/resourceconfig.json input/config/inputdataconfig.json input/config/hyperparameters.json model/
cat input/data/train/a.csv input/data/train/sub/b.csv > model/data.csv
echo "$TRAINING_JOB_NAME $SM_CHANNEL_TRAIN $SM_MODEL_DIR" > model/env.txt
echo loss=0.1 > output/data/metrics.txt`)
	j.Channels = map[string]string{"train": "s3://jobs/data/train"}
	j.HPs = map[string]any{"epochs": `"2"`, "lr": "0.1"}
	j.OutputPath = "s3://jobs/out"
	a := attemptOf("tj-1", "j1", j)
	a.TrainingJobArn = "arn:aws:sagemaker:eu-west-1:123456789012:training-job/tj-1"
	h.start(a)
	h.await("tj-1", executor.Succeeded)

	model := s3test.Untar(t, h.get(t, "out/tj-1/output/model.tar.gz"))
	if got := model["data.csv"]; got != "1,2\n3,4\n" {
		t.Errorf("staged channel = %q", got)
	}
	var rc map[string]any
	json.Unmarshal([]byte(model["resourceconfig.json"]), &rc)
	if rc["current_host"] != "algo-1" || rc["current_instance_type"] != "ml.m5.large" || rc["network_interface_name"] != "eth0" ||
		rc["current_group_name"] != "homogeneousCluster" {
		t.Errorf("resourceconfig.json = %s", model["resourceconfig.json"])
	}
	if got, want := model["hyperparameters.json"], `{"epochs":"\"2\"","lr":"0.1"}`; got != want {
		t.Errorf("hyperparameters.json = %s, want %s", got, want)
	}
	if got, want := model["inputdataconfig.json"], `{"train":{"TrainingInputMode":"File","S3DistributionType":"FullyReplicated","RecordWrapperType":"None"}}`; got != want {
		t.Errorf("inputdataconfig.json = %s, want %s", got, want)
	}
	wantEnv := "tj-1 " + h.treePath("tj-1", "algo-1", "input/data/train") + " " + h.treePath("tj-1", "algo-1", "model") + "\n"
	if got := model["env.txt"]; got != wantEnv {
		t.Errorf("environment = %q, want %q", got, wantEnv)
	}
	if out := s3test.Untar(t, h.get(t, "out/tj-1/output/output.tar.gz")); out["metrics.txt"] != "loss=0.1\n" {
		t.Errorf("output.tar.gz = %v", out)
	}
	var staging []string
	for _, u := range h.updates("tj-1") {
		if u.State == executor.Starting && u.Reason != "" {
			staging = append(staging, u.Reason)
		}
	}
	if len(staging) == 0 || !strings.HasPrefix(staging[0], "Downloading input data") {
		t.Errorf("Starting reasons = %q, want the staging's", staging)
	}
	if st := h.status("tj-1"); st.Data == nil || st.Data.ModelURI != "s3://jobs/out/tj-1/output/model.tar.gz" {
		t.Errorf("recorded outputs = %+v", st.Data)
	}
}

// Ensure the failure file's text is a failed attempt's reason.
func TestContractFailureFile(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(attemptOf("f", "j", sh(`echo "AlgorithmError: learning rate too high" > "$SM_OUTPUT_DIR/failure"; echo noise >&2; exit 3`)))
	u := h.await("f", executor.Failed)
	if want := "exit code 3: AlgorithmError: learning rate too high"; u.Reason != want {
		t.Errorf("reason = %q, want %q", u.Reason, want)
	}
}

// Ensure a channel that cannot be read fails the attempt with a reason that
// names it, before anything runs, and leaves nothing staged.
func TestContractMissingChannel(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/train/a.csv", "1\n")
	marker := filepath.Join(t.TempDir(), "ran")
	j := sh(`touch ` + marker)
	j.Channels = map[string]string{"train": "s3://jobs/data/train", "test": "s3://no-such-bucket/test"}
	h.start(attemptOf("m", "j", j))
	u := h.await("m", executor.Failed)
	if !strings.HasPrefix(u.Reason, "ClientError: channel test: s3://no-such-bucket/test: ") || !strings.Contains(u.Reason, "no-such-bucket") {
		t.Errorf("reason = %q", u.Reason)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the job ran")
	}
	if _, err := os.Stat(filepath.Join(h.attemptDir("m"), "hosts", "algo-1", "input", "data")); !os.IsNotExist(err) {
		t.Errorf("staged data left behind: %v", err)
	}
}

// Ensure a job stopped mid-training saves its checkpoints to S3 after it
// exits, and its next attempt on another machine (another data dir)
// starts from them.
func TestContractCheckpointResume(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{DefaultGrace: 10 * time.Second})
	makeBucket(t, h.s3, h.bucket)
	script := `ckpt=${SM_CHECKPOINT_DIR}
if [ -f "$ckpt/step" ]; then echo "resumed at $(cat "$ckpt/step")"; exit 0; fi
trap 'echo 41 > "$ckpt/step"; exit 0' TERM
echo ready; while :; do sleep 0.1; done`
	j := sh(script)
	j.CheckpointURI = "s3://jobs/ckpt/j"
	h.start(attemptOf("c1", "j", j))
	h.await("c1", executor.Running)
	waitFile(t, filepath.Join(h.attemptDir("c1"), "logs", "algo-1.stdout"), "ready")
	h.stop("c1", 10*time.Second)
	h.await("c1", executor.Stopped)
	if got := string(h.get(t, "ckpt/j/step")); got != "41\n" {
		t.Fatalf("checkpoint in S3 = %q", got)
	}

	other := newS3Harness(t, endpoint, Options{})
	other.start(attemptOf("c2", "j", j))
	other.await("c2", executor.Succeeded)
	if got := strings.TrimSpace(other.log("c2", "algo-1", "stdout")); got != "resumed at 41" {
		t.Errorf("second attempt printed %q", got)
	}
}

// Ensure a stop while the channels are staged ends the attempt at once.
func TestContractStopWhileStaging(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	big := strings.Repeat("x", 64<<20)
	h.put(t, "data/big/blob", big)
	j := sh(`echo ran`)
	j.Channels = map[string]string{"train": "s3://jobs/data/big"}
	h.start(attemptOf("s", "j", j))
	h.await("s", executor.Starting) // staging
	h.stop("s", time.Second)
	h.await("s", executor.Stopped)
	if got := h.log("s", "algo-1", "stdout"); got != "" {
		t.Errorf("the job ran: %q", got)
	}
}

// Ensure staged files come from the cache for the next job without a
// copy, and a job that writes into its channel changes neither the cache
// nor what the next job reads.
func TestContractChannelWritesStayPrivate(t *testing.T) {
	endpoint, _ := s3test.Start(t)
	h := newS3Harness(t, endpoint, Options{})
	makeBucket(t, h.s3, h.bucket)
	h.put(t, "data/train/a.csv", "original\n")
	writer := sh(`cd "$SM_CHANNEL_TRAIN" && cat a.csv && echo modified > a.csv && echo new > b.csv`)
	writer.Channels = map[string]string{"train": "s3://jobs/data/train"}
	h.start(attemptOf("w", "j1", writer))
	h.await("w", executor.Succeeded)
	reader := sh(`cd "$SM_CHANNEL_TRAIN" && cat a.csv && ls`)
	reader.Channels = writer.Channels
	h.start(attemptOf("r", "j2", reader))
	h.await("r", executor.Succeeded)
	if got := h.log("r", "algo-1", "stdout"); got != "original\na.csv\n" {
		t.Errorf("the next job read %q", got)
	}
	if h.e.mountNS {
		a := filepath.Join(h.attemptDir("r"), "hosts", "algo-1", "input", "data", "train", "a.csv")
		if fi, err := os.Stat(a); err != nil || fi.Sys().(*syscall.Stat_t).Nlink < 2 {
			t.Errorf("a.csv of the second job is not linked from the cache: %v", err)
		}
	}
}

// Ensure a job that uses the SageMaker contract sees its tree at /opt/ml,
// and a bare command runs without a mount namespace, its tree at its own
// path.
func TestContractOrBareCommand(t *testing.T) {
	h := newHarness(t, Options{})
	if !h.e.mountNS {
		t.Skip("mount namespaces cannot be made here (not root)")
	}
	contract := sh(`cat /opt/ml/input/config/hyperparameters.json`)
	contract.HPs = map[string]any{"epochs": "3"}
	h.start(attemptOf("contract", "j1", contract))
	h.await("contract", executor.Succeeded)
	if got := h.log("contract", "algo-1", "stdout"); got != `{"epochs":"3"}` {
		t.Errorf("the contract job read %q", got)
	}
	h.start(attemptOf("bare", "j2", sh(`echo "$SM_MODEL_DIR"`)))
	h.await("bare", executor.Succeeded)
	if got, want := strings.TrimSpace(h.log("bare", "algo-1", "stdout")), filepath.Join(h.attemptDir("bare"), "hosts", "algo-1", "model"); got != want {
		t.Errorf("the bare command's model directory is %q, want %q", got, want)
	}
}
