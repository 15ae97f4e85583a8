package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/sharq-dev/sharq/internal/container/containertest"
	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// The SageMaker Python SDK's ModelTrainer submitting through
// aws_batch.TrainingQueue, done with boto3 by scripts/sagemaker/trainer.py
// against the real binary and a real S3 server (moto_server): the code and
// sm_drivers channels uploaded, the SDK's payload submitted, its driver
// (scripts/sagemaker/sm_train.sh) run by the local executor at /opt/ml, the
// model read back from S3.

// awsIsolated keeps the user's AWS configuration and any instance metadata
// service out of a process's credentials.
var awsIsolated = []string{"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true"}

// awsCredentialVars are the variables that could hand a process AWS
// credentials or send its calls elsewhere.
var awsCredentialVars = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
	"AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_BATCH", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"}

// motoKeys are the credentials moto_server accepts.
var motoKeys = append([]string{"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_DEFAULT_REGION=" + region}, awsIsolated...)

// smServer is a sharq serve with the local executor whose S3 is the
// package's moto_server.
type smServer struct {
	*localServer
	s3 string
	// clientEnv signs the scenario's calls (moto's keys, or a sharq key
	// where sharq serves S3 itself).
	clientEnv []string
	// batch is the scenario's own Batch client.
	batch *batch.Client
}

// startSageMaker starts sharq serve --s3-endpoint at the package's
// moto_server (started by the first test that needs it).
// The jobs' driver finds its files at /opt/ml, which the local executor
// binds only as root.
func startSageMaker(t *testing.T, args ...string) *smServer {
	t.Helper()
	requireRoot(t)
	endpoint := sharedS3Endpoint(t)
	s := startLocalWith(t, serverOptions{args: append([]string{"--stop-grace", "30s", "--s3-endpoint", endpoint}, args...),
		env: motoKeys, unsetEnv: awsCredentialVars}, newMark(t))
	return &smServer{localServer: s, s3: endpoint, clientEnv: motoKeys, batch: s.client()}
}

// startSageMakerBuiltin starts sharq serve with no --s3-endpoint, so that
// it serves S3 itself, with --auth sigv4: the scenario uploads its
// channels to sharq, signed with an administrator's key, and the executor
// stages them from there and uploads the model there.
func startSageMakerBuiltin(t *testing.T, args ...string) *smServer {
	t.Helper()
	requireRoot(t)
	dataDir := t.TempDir()
	admin := createKey(t, dataDir, "admin", "AdministratorAccess")
	s := startLocalWith(t, serverOptions{dataDir: dataDir, args: append([]string{"--stop-grace", "30s", "--auth", "sigv4"}, args...),
		env: awsIsolated, unsetEnv: awsCredentialVars}, newMark(t))
	env := append(admin.env(), "AWS_DEFAULT_REGION="+region)
	return &smServer{localServer: s, s3: s.url, clientEnv: append(env, awsIsolated...), batch: s.clientWith(admin)}
}

// requireRoot skips (or fails, where CI asks for S3) a test whose jobs
// read /opt/ml, which they see only when sharq serve runs as root; and
// fails one without the tools the scenarios run.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv(s3test.RequireEnv) != "" {
			t.Fatalf("the SageMaker driver reads /opt/ml, which jobs see only when sharq serve runs as root; this test runs as uid %d and %s is set", os.Geteuid(), s3test.RequireEnv)
		}
		t.Skipf("the SageMaker driver reads /opt/ml, which jobs see only when sharq serve runs as root; set %s=1 to make this a failure", s3test.RequireEnv)
	}
	for _, tool := range []string{"python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): the SageMaker tests run a boto3 client and the SDK's bash driver", tool, err)
		}
	}
}

// sharedS3 is the one moto_server of the package's SageMaker tests, each
// of which keeps to buckets of its own: one server costs less than one a
// test on a machine of two cores.
var sharedS3 struct {
	once sync.Once
	srv  *s3test.Server
	err  error
}

func sharedS3Endpoint(t *testing.T) string {
	t.Helper()
	s3test.Require(t)
	sharedS3.once.Do(func() { sharedS3.srv, sharedS3.err = s3test.Launch() })
	if sharedS3.err != nil {
		t.Fatal(sharedS3.err)
	}
	return sharedS3.srv.Endpoint
}

// stopSharedS3 stops the shared moto_server, if it was started.
func stopSharedS3() {
	if sharedS3.srv != nil {
		sharedS3.srv.Stop()
	}
}

// trainer runs scripts/sagemaker/trainer.py's scenario against the server
// and returns its RESULT, failing the test with the script's output if it
// fails.
func (s *smServer) trainer(t *testing.T, scenario string) map[string]json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "python3", "scripts/sagemaker/trainer.py", scenario, "--batch", s.url, "--s3", s.s3,
		"--mark", s.mark, "--bucket", "sharq-e2e-"+scenario, "--work", t.TempDir(), "--checkpoints", filepath.Join(s.dataDir, "executor", "checkpoints"))
	cmd.Env = serverEnv(serverOptions{env: s.clientEnv, unsetEnv: awsCredentialVars})
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setpgid: true})
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("trainer.py %s failed (%v) after %v; its output:\n%s", scenario, err, time.Since(start).Round(time.Millisecond), out.String())
	}
	t.Logf("trainer.py %s passed in %v:\n%s", scenario, time.Since(start).Round(time.Millisecond), out.String())
	var result map[string]json.RawMessage
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &result); err != nil {
				t.Fatalf("trainer.py %s: RESULT is not JSON: %v", scenario, err)
			}
		}
	}
	if result == nil {
		t.Fatalf("trainer.py %s printed no RESULT line", scenario)
	}
	return result
}

// field decodes one field of a RESULT.
func field[T any](t *testing.T, result map[string]json.RawMessage, name string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(result[name], &v); err != nil {
		t.Fatalf("RESULT's %s %s: %v", name, result[name], err)
	}
	return v
}

// checkFlowModel checks the model.json the flow scenario's training wrote:
// the mean of the data channel's rows, the hyperparameters it was given and
// the host it ran on.
func checkFlowModel(t *testing.T, r map[string]json.RawMessage) {
	t.Helper()
	type model struct {
		Mean      float64
		Rows      int
		Epochs    int
		Optimizer string
		Host      string
	}
	if m := field[model](t, r, "model"); m != (model{Mean: 3, Rows: 4, Epochs: 2, Optimizer: "adam", Host: "algo-1"}) {
		t.Errorf("model.json %+v, want the mean 3 of 4 rows after 2 epochs with adam on algo-1", m)
	}
}

// A ModelTrainer job from upload to model: bucket, sm_drivers, code and a
// data channel uploaded, the SDK's payload submitted, the driver reading
// the config files and passing the hyperparameters, the model and output
// archives in S3 under the training job's name; then the AWS CLI
// describes the finished job.
func TestSageMakerModelTrainerFlow(t *testing.T) {
	t.Parallel()
	s := startSageMaker(t)
	r := s.trainer(t, "flow")
	checkFlowModel(t, r)
	statuses := field[[][2]string](t, r, "statuses")
	if len(statuses) == 0 || !slices.Contains([]string{"SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING"}, statuses[0][0]) {
		t.Errorf("the statuses seen were %v, want the first before RUNNING", statuses)
	}

	job, name := field[string](t, r, "job"), field[string](t, r, "training_job")
	cli := exec.CommandContext(ctx(t), "aws", "batch", "describe-service-job", "--job-id", job,
		"--endpoint-url", s.url, "--region", region, "--output", "json")
	cli.Env = serverEnv(serverOptions{env: append([]string{"AWS_PAGER="}, motoKeys...), unsetEnv: awsCredentialVars})
	out, err := cli.Output()
	if err != nil {
		t.Fatalf("aws batch describe-service-job: %v (is the AWS CLI installed? pip install awscli)\n%s", err, out)
	}
	var d struct {
		Status        string
		LatestAttempt struct{ ServiceResourceId struct{ Value string } }
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("aws batch describe-service-job printed %s: %v", out, err)
	}
	if d.Status != "SUCCEEDED" || !strings.HasSuffix(d.LatestAttempt.ServiceResourceId.Value, ":training-job/"+name) {
		t.Errorf("aws batch describe-service-job: %s, want SUCCEEDED with the training job %s", out, name)
	}
	s.waitEnded(t, s.client(), job)
	s.stop()
}

// The same flow where sharq serves S3 itself: the channels uploaded to
// sharq's own endpoint signed with a sharq key, staged by the executor
// from the built-in S3, model.tar.gz uploaded to it and read back through
// it.
func TestSageMakerBuiltinS3Flow(t *testing.T) {
	t.Parallel()
	s := startSageMakerBuiltin(t)
	r := s.trainer(t, "flow")
	checkFlowModel(t, r)
	matches, _ := filepath.Glob(filepath.Join(s.dataDir, "s3", "buckets", "sharq-e2e-flow", "mean", "*", "output", "model.tar.gz#o"))
	if len(matches) != 1 {
		t.Errorf("model.tar.gz in the data dir's bucket: %v, want one", matches)
	}
	s.waitEnded(t, s.batch, field[string](t, r, "job"))
	s.stop()
}

// The same job's TrainingImage, which names a registry this machine cannot
// reach, runs as a local image through the image map, in a podman
// container with its tree at /opt/ml: the SDK's driver and the user's code
// run in the image's own bash and python3.
func TestSageMakerInContainer(t *testing.T) {
	t.Parallel()
	rt := containertest.Podman(t)
	imageMap := filepath.Join(t.TempDir(), "images")
	if err := os.WriteFile(imageMap, []byte("registry.example/sharq-e2e-train:* "+containertest.PythonImage+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSageMaker(t, "--container-runtime", rt.Path, "--image-map", imageMap)
	r := s.trainer(t, "flow")
	checkFlowModel(t, r)
	s.waitEnded(t, s.client(), field[string](t, r, "job"))
	s.stop()
	if left := containertest.Leftovers(t, rt, field[string](t, r, "training_job"), ""); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
}

// train.py raises; the driver writes /opt/ml/output/failure, whose text is
// the job's statusReason after the exit code.
func TestSageMakerFailureReason(t *testing.T) {
	t.Parallel()
	s := startSageMaker(t)
	r := s.trainer(t, "failure")
	const want = "exit code 1: AlgorithmError: ValueError: loss is NaN after epoch 1"
	if got := field[string](t, r, "statusReason"); got != want {
		t.Errorf("the failed job's statusReason is %q, want %q", got, want)
	}
	s.waitEnded(t, s.client(), field[string](t, r, "job"))
	s.stop()
}

// Two hosts in process mode: each has its own resource config and a
// disjoint share of a ShardedByS3Key channel, together all of it, and the
// model is both hosts' model directories.
func TestSageMakerTwoHosts(t *testing.T) {
	t.Parallel()
	s := startSageMaker(t)
	r := s.trainer(t, "two-hosts")
	model := field[map[string]string](t, r, "model")
	if files := field[[]string](t, r, "files"); !slices.Equal(files, []string{"algo-1.json", "algo-1.txt", "algo-2.json", "algo-2.txt"}) {
		t.Fatalf("model.tar.gz holds %v, want each host's list and config", files)
	}
	var all []string
	for _, host := range []string{"algo-1", "algo-2"} {
		var cfg struct {
			ResourceConfig struct {
				CurrentHost string   `json:"current_host"`
				Hosts       []string `json:"hosts"`
			}
			SMHosts []string `json:"sm_hosts"`
		}
		if err := json.Unmarshal([]byte(model[host+".json"]), &cfg); err != nil {
			t.Fatalf("%s.json: %v", host, err)
		}
		hosts := []string{"algo-1", "algo-2"}
		if cfg.ResourceConfig.CurrentHost != host || !slices.Equal(cfg.ResourceConfig.Hosts, hosts) || !slices.Equal(cfg.SMHosts, hosts) {
			t.Errorf("%s saw %s, want current_host %s and hosts %v in resourceconfig.json and SM_HOSTS", host, model[host+".json"], host, hosts)
		}
		got := strings.Fields(model[host+".txt"])
		if len(got) == 0 {
			t.Errorf("%s got no object of the sharded channel", host)
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	if want := []string{"part-0.csv", "part-1.csv", "part-2.csv", "part-3.csv"}; !slices.Equal(all, want) {
		t.Errorf("the hosts got %v of the sharded channel together, want each of %v once", all, want)
	}
	s.waitEnded(t, s.client(), field[string](t, r, "job"))
	s.stop()
}

// A job preempted in its share saves a checkpoint on SIGTERM; it goes to
// CheckpointConfig.S3Uri, and the next attempt restores it from there and
// resumes at that step.
func TestSageMakerCheckpointResume(t *testing.T) {
	t.Parallel()
	s := startSageMaker(t)
	r := s.trainer(t, "checkpoint")
	step := field[int](t, r, "checkpoint_step")
	attempts := field[[]string](t, r, "attempts")
	if len(attempts) != 2 || attempts[0] == attempts[1] {
		t.Fatalf("the job's attempts are %v, want two (the preempted one, then the one that resumed)", attempts)
	}
	if log := s.attemptLog(t, attempts[0], "stdout"); !strings.Contains(log, "SIGTERM: checkpoint at step "+strconv.Itoa(step)) {
		t.Errorf("the preempted attempt's log says %q, want it to save step %d on SIGTERM", log, step)
	}
	if log := s.attemptLog(t, attempts[1], "stdout"); !strings.Contains(log, "resumed from step "+strconv.Itoa(step)) {
		t.Errorf("the second attempt's log says %q, want it to resume from step %d", log, step)
	}
	s.waitEnded(t, s.client(), field[string](t, r, "job"))
	s.stop()
}

// A server with no S3 (AWS's, and no AWS credentials) refuses at
// submission a payload that names S3, saying which field; and a payload
// without a command is refused by any local executor.
func TestSageMakerRefusedAtSubmit(t *testing.T) {
	t.Parallel()
	s := startLocalWith(t, serverOptions{args: []string{"--s3-endpoint", "aws"}, env: awsIsolated, unsetEnv: awsCredentialVars}, newMark(t))
	c := s.client()
	setUpWalkthrough(t, c, 1)
	algo := map[string]any{"TrainingImage": trainingImage, "TrainingInputMode": "File",
		"ContainerEntrypoint": []string{"/bin/bash"}, "ContainerArguments": []string{"-c", "true"}}
	rc := map[string]any{"InstanceType": g5, "InstanceCount": 1, "VolumeSizeInGB": 30}
	channel := map[string]any{"ChannelName": "train", "InputMode": "File", "DataSource": map[string]any{"S3DataSource": map[string]any{
		"S3DataType": "S3Prefix", "S3Uri": "s3://bucket/train", "S3DataDistributionType": "FullyReplicated"}}}
	noCommand := map[string]any{"TrainingImage": trainingImage, "TrainingInputMode": "File"}
	for _, tc := range []struct {
		what    string
		payload map[string]any
		want    string
	}{
		{"an S3 channel", map[string]any{"AlgorithmSpecification": algo, "ResourceConfig": rc, "InputDataConfig": []any{channel}},
			"InputDataConfig[0].DataSource.S3DataSource.S3Uri (channel train) is in S3"},
		{"an S3 output path", map[string]any{"AlgorithmSpecification": algo, "ResourceConfig": rc,
			"OutputDataConfig": map[string]any{"S3OutputPath": "s3://bucket/out"}}, "OutputDataConfig.S3OutputPath is in S3"},
		{"no ContainerEntrypoint", map[string]any{"AlgorithmSpecification": noCommand, "ResourceConfig": rc},
			"AlgorithmSpecification.ContainerEntrypoint is required"},
	} {
		tc.payload["TrainingJobName"] = "refused"
		_, err := c.SubmitServiceJob(ctx(t), &batch.SubmitServiceJobInput{JobName: aws.String("refused"), JobQueue: aws.String(queueName),
			ServiceJobType: types.ServiceJobTypeSagemakerTraining, ServiceRequestPayload: aws.String(js(tc.payload)),
			QuotaShareName: aws.String("QS1"), SchedulingPriority: aws.Int32(1)})
		wantClientException(t, "SubmitServiceJob with "+tc.what, err, tc.want)
	}
	list, err := c.ListServiceJobs(ctx(t), &batch.ListServiceJobsInput{JobQueue: aws.String(queueName),
		Filters: []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{"refused"}}}})
	fatalIf(t, "ListServiceJobs", err)
	if len(list.JobSummaryList) != 0 {
		t.Errorf("the queue holds %s after refused submissions, want no job", js(list.JobSummaryList))
	}
	s.stop()
}
