package local

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/sharq-dev/sharq/internal/executor"
)

// FuzzParseJob feeds arbitrary payloads to parseJob and to what the
// executor reads from an accepted one. A refused payload is a CannotStart
// error; an accepted one has a command, hyperparameters and channels
// without loss, a grace period that is absent, refused as CannotStart or
// not negative, and a timeout that is the shorter of the attempt's and the
// payload's (a payload's limit too long for a time.Duration is no limit).
func FuzzParseJob(f *testing.F) {
	for _, s := range []string{
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["python","train.py"],"ContainerArguments":["--epochs","2"]},` +
			`"HyperParameters":{"lr":"0.1","epochs":3,"fast":true},"Environment":{"A":"1","SHARQ_STOP_GRACE_SECONDS":"2.5"},` +
			`"InputDataConfig":[{"ChannelName":"train","DataSource":{"S3DataSource":{"S3Uri":"file:///data/train"}}},` +
			`{"ChannelName":"fsx","DataSource":{"FileSystemDataSource":{"DirectoryPath":"/fsx"}}},` +
			`{"ChannelName":"remote","DataSource":{"S3DataSource":{"S3Uri":"s3://bucket/prefix"}}}],` +
			`"CheckpointConfig":{"LocalPath":"/ckpt"},"StoppingCondition":{"MaxRuntimeInSeconds":3600},` +
			`"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":2}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":[]}}`,
		`{"AlgorithmSpecification":{"TrainingImage":"x"}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"Environment":{"SHARQ_STOP_GRACE_SECONDS":"-1"}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"Environment":{"SHARQ_STOP_GRACE_SECONDS":"soon"}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"StoppingCondition":{"MaxRuntimeInSeconds":-5}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"StoppingCondition":{"MaxRuntimeInSeconds":1.5}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"ResourceConfig":{"InstanceCount":"2"}}`,
		`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"InputDataConfig":[{"ChannelName":"a","DataSource":{"S3DataSource":{"S3Uri":"file:relative"}}}]}`,
		`[]`,
		`null`,
		``,
	} {
		f.Add([]byte(s), int64(0))
	}
	f.Add([]byte(`{"AlgorithmSpecification":{"ContainerEntrypoint":["true"]},"StoppingCondition":{"MaxRuntimeInSeconds":7200}}`), int64(3600))
	f.Fuzz(func(t *testing.T, payload []byte, attemptSecs int64) {
		j, err := parseJob(payload)
		if err != nil {
			if !errors.Is(err, errCannotStart) || j != nil {
				t.Fatalf("refused with %v, job %v", err, j)
			}
			return
		}
		if len(j.AlgorithmSpecification.ContainerEntrypoint) == 0 {
			t.Fatalf("accepted without a ContainerEntrypoint")
		}
		if hps := j.HyperParameters.Strings(); len(hps) != len(j.HyperParameters) {
			t.Fatalf("hyperparameters %v of %v", hps, j.HyperParameters)
		}
		grace, err := graceOverride(j)
		_, hasGrace := j.Environment[graceEnv]
		switch {
		case err != nil && !errors.Is(err, errCannotStart):
			t.Fatalf("grace: %v", err)
		case err == nil && (grace != nil) != hasGrace:
			t.Fatalf("grace %v for environment %v", grace, j.Environment)
		case err == nil && grace != nil && *grace < 0:
			t.Fatalf("grace %s from %s=%q", *grace, graceEnv, j.Environment[graceEnv])
		}

		attempt := time.Duration(max(0, min(attemptSecs, math.MaxInt64/int64(time.Second)))) * time.Second
		maxRuntime := j.StoppingCondition.MaxRuntimeInSeconds
		want := attempt
		if maxRuntime > 0 && maxRuntime <= math.MaxInt64/int64(time.Second) {
			if m := time.Duration(maxRuntime) * time.Second; attempt == 0 || m < attempt {
				want = m
			}
		}
		if got := timeout(attempt, maxRuntime); got != want {
			t.Fatalf("timeout(%s, %d s) = %s, want %s", attempt, maxRuntime, got, want)
		}

		if rc := j.ResourceConfig; rc != nil && len(rc.InstanceGroups) == 0 {
			n := 1
			if rc.InstanceCount != nil {
				n = *rc.InstanceCount
			}
			if n >= 1 && n <= 64 {
				if got := hostsOf(executor.Attempt{}, j); len(got) != n {
					t.Fatalf("%d hosts for InstanceCount %d", len(got), n)
				}
			}
		}
	})
}
