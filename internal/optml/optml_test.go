package optml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/trainingjob"
)

func parse(t *testing.T, s string) *trainingjob.Request {
	t.Helper()
	r, err := trainingjob.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Ensure a job of instance groups gets its hosts group by group, and each
// host's resourceconfig.json names its group and every group's hosts.
func TestWriteInstanceGroups(t *testing.T) {
	r := parse(t, `{"ResourceConfig":{"InstanceGroups":[
		{"InstanceGroupName":"gpu","InstanceType":"ml.g5.xlarge","InstanceCount":2},
		{"InstanceGroupName":"cpu","InstanceType":"ml.m5.large","InstanceCount":1}]},
		"HyperParameters":{"epochs":"3"},
		"InputDataConfig":[{"ChannelName":"train","ContentType":"text/csv","InputMode":"FastFile",
			"DataSource":{"S3DataSource":{"S3Uri":"s3://b/p","S3DataDistributionType":"ShardedByS3Key"}}}]}`)
	hosts := Cluster(r)
	want := []Host{{"algo-1", "ml.g5.xlarge", "gpu"}, {"algo-2", "ml.g5.xlarge", "gpu"}, {"algo-3", "ml.m5.large", "cpu"}}
	if diff := cmp.Diff(want, hosts); diff != "" {
		t.Fatalf("Cluster (-want +got):\n%s", diff)
	}
	dir := t.TempDir()
	if err := Write(dir, r, hosts, 2); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, ConfigDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("resourceconfig.json"), `{"current_host":"algo-3","current_instance_type":"ml.m5.large","current_group_name":"cpu",`+
		`"hosts":["algo-1","algo-2","algo-3"],"instance_groups":[{"instance_group_name":"gpu","instance_type":"ml.g5.xlarge","hosts":["algo-1","algo-2"]},`+
		`{"instance_group_name":"cpu","instance_type":"ml.m5.large","hosts":["algo-3"]}],"network_interface_name":"eth0"}`; got != want {
		t.Errorf("resourceconfig.json =\n%s\nwant\n%s", got, want)
	}
	if got, want := read("inputdataconfig.json"), `{"train":{"ContentType":"text/csv","TrainingInputMode":"FastFile","S3DistributionType":"ShardedByS3Key","RecordWrapperType":"None"}}`; got != want {
		t.Errorf("inputdataconfig.json = %s, want %s", got, want)
	}
	if got, want := read("hyperparameters.json"), `{"epochs":"3"}`; got != want {
		t.Errorf("hyperparameters.json = %s, want %s", got, want)
	}
	for _, d := range []string{ModelDir, OutputData, "input/data/train", "checkpoints"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
}

// Ensure the environment has SageMaker's variables after the payload's,
// with paths at the root given.
func TestEnv(t *testing.T) {
	r := parse(t, `{"ResourceConfig":{"InstanceType":"ml.m5.large","InstanceCount":2},
		"Environment":{"SM_CURRENT_HOST":"mine","A":"1"},
		"CheckpointConfig":{"LocalPath":"/opt/ml/ckpt"},
		"InputDataConfig":[{"ChannelName":"train","DataSource":{"S3DataSource":{"S3Uri":"s3://b/p"}}}]}`)
	vars := map[string]string{}
	for _, v := range Env(r, Cluster(r), 1, "/opt/ml", Job{Name: "tj", Arn: "arn:aws:sagemaker:eu-west-1:1:training-job/tj", Region: "eu-west-1"}) {
		vars[v.Name] = v.Value // later ones win, as in an environment
	}
	for k, want := range map[string]string{
		"A": "1", "SM_CURRENT_HOST": "algo-2", "SM_HOSTS": `["algo-1","algo-2"]`, "TRAINING_JOB_NAME": "tj",
		"TRAINING_JOB_ARN": "arn:aws:sagemaker:eu-west-1:1:training-job/tj", "AWS_REGION": "eu-west-1",
		"SM_CHANNEL_TRAIN": "/opt/ml/input/data/train", "SM_CHANNELS": `["train"]`, "SM_MODEL_DIR": "/opt/ml/model",
		"SM_CHECKPOINT_DIR": "/opt/ml/ckpt", "SM_MASTER_ADDR": "algo-1", "SM_INPUT_CONFIG_DIR": "/opt/ml/input/config",
	} {
		if vars[k] != want {
			t.Errorf("%s = %q, want %q", k, vars[k], want)
		}
	}
	for _, v := range Env(r, Cluster(r), 0, "/data/a/hosts/algo-1", Job{Name: "tj"}) {
		if v.Name == "SM_CHECKPOINT_DIR" && v.Value != "/data/a/hosts/algo-1/ckpt" {
			t.Errorf("SM_CHECKPOINT_DIR at a tree's own path = %q", v.Value)
		}
	}
}

// Ensure the failure file gives at most its first 1,024 characters.
func TestFailureReason(t *testing.T) {
	dir := t.TempDir()
	if got := FailureReason(dir); got != "" {
		t.Errorf("without a file: %q", got)
	}
	os.MkdirAll(filepath.Join(dir, OutputDir), 0o755)
	os.WriteFile(filepath.Join(dir, Failure), []byte("  "+strings.Repeat("x", 2000)), 0o644)
	if got := FailureReason(dir); len(got) != 1022 {
		t.Errorf("reason of %d characters", len(got))
	}
}

// Ensure the model and output go where SageMaker puts them.
func TestOutputURIs(t *testing.T) {
	for _, tc := range []struct{ payload, model, output string }{
		{`{}`, "", ""},
		{`{"OutputDataConfig":{"S3OutputPath":"s3://b/base/"}}`, "s3://b/base/tj/output/model.tar.gz", "s3://b/base/tj/output/output.tar.gz"},
		{`{"OutputDataConfig":{"S3OutputPath":"s3://b/base","CompressionType":"NONE"}}`, "s3://b/base/tj/output/model/", "s3://b/base/tj/output/data/"},
		{`{"OutputDataConfig":{"S3OutputPath":"file:///srv/models"}}`, "file:///srv/models/tj/output/model.tar.gz", "file:///srv/models/tj/output/output.tar.gz"},
	} {
		r := parse(t, tc.payload)
		if got := ModelURI(r, "tj"); got != tc.model {
			t.Errorf("%s: model %q, want %q", tc.payload, got, tc.model)
		}
		if got := OutputURI(r, "tj"); got != tc.output {
			t.Errorf("%s: output %q, want %q", tc.payload, got, tc.output)
		}
	}
}

func TestUnderRoot(t *testing.T) {
	for p, want := range map[string]string{"/opt/ml/checkpoints": "checkpoints", "/opt/ml/a/../b": "b", "/opt/ml": "", "/opt/mlx": "", "/ckpt": "", "/opt/ml/../etc": ""} {
		got, ok := UnderRoot(p)
		if got != want || ok != (want != "") {
			t.Errorf("UnderRoot(%q) = %q, %v", p, got, ok)
		}
	}
}
