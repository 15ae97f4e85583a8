package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ensure sharq serve --executor kube fails at once, saying why, when no
// cluster can be reached.
func TestServeKubeWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "kubeconfig")
	os.WriteFile(dead, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"), 0o600)
	table := "../../examples/kube/instance-types.yaml"
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"NoConfig":    {env: map[string]string{"HOME": dir, "KUBECONFIG": ""}, want: "no Kubernetes cluster"},
		"Unreachable": {args: []string{"--kubeconfig", dead}, want: "cannot reach the Kubernetes API server at https://127.0.0.1:1"},
		"NoTable":     {args: []string{"--kubeconfig", dead, "--kube-instance-types", ""}, want: "needs --kube-instance-types"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			args := append([]string{"--executor", "kube", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0",
				"--kube-instance-types", table}, tc.args...)
			begin := time.Now()
			if rc := runServe(context.Background(), args, &stderr, &stderr); rc != 1 {
				t.Errorf("rc %d, want 1", rc)
			}
			if took := time.Since(begin); took > 5*time.Second {
				t.Errorf("took %s to fail", took)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tc.want)
			}
		})
	}
}

// Ensure serve refuses a number of executor workers that could make no
// call, before it opens anything.
func TestServeExecutorWorkers(t *testing.T) {
	for _, n := range []string{"-1", "-3"} {
		var stderr bytes.Buffer
		dir := filepath.Join(t.TempDir(), "data")
		if rc := runServe(context.Background(), []string{"--executor-workers", n, "--data-dir", dir}, &stderr, &stderr); rc != 2 {
			t.Errorf("--executor-workers %s: rc %d, want 2", n, rc)
		}
		if want := "--executor-workers must be 0 (the executor's default) or more, not " + n; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want it to say %q", stderr.String(), want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("--executor-workers %s: the data dir was made", n)
		}
	}
}
