package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/executor/local"
)

// Ensure the instance-type table gives each type's container limits and
// GPUs, and refuses what it cannot mean.
func TestReadInstanceTypes(t *testing.T) {
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "types.yaml")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	limits, gpus, err := readInstanceTypes(write("ml.g5.xlarge: {cpus: 4, memory: 16Gi, gpus: 1}\nml.m5.large: {cpus: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]local.InstanceLimits{"ml.g5.xlarge": {CPUs: 4, MemoryBytes: 16 << 30}, "ml.m5.large": {CPUs: 2}}, limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"ml.g5.xlarge": 1}, gpus); diff != "" {
		t.Errorf("gpus (-want +got):\n%s", diff)
	}
	for body, want := range map[string]string{
		"g5: {cpus: 1}":                    `"g5" is not a SageMaker Training instance type`,
		"ml.g5.xlarge: {memory: lots}":     `memory "lots" is not a quantity`,
		"ml.g5.xlarge: {cpu: 1}":           `unknown field "cpu"`,
		"ml.g5.xlarge: {cpus: -1}":         "cpus must not be negative",
		"ml.g5.xlarge: {gpus: -2}":         "gpus must not be negative",
		"ml.g5.xlarge: {memory: \"-1Gi\"}": "is not a quantity of bytes",
	} {
		if _, _, err := readInstanceTypes(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
