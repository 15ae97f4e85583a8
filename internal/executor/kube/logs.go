package kube

import (
	"context"
	"io"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sharq-dev/sharq/internal/executor"
)

// Logs reads what an instance's container printed through the API server.
// Kubernetes keeps one stream per container: it is the instance's stdout,
// and stderr reads empty.
func (e *Executor) Logs(ctx context.Context, attemptID, host, stream string, offset int64) (io.ReadCloser, error) {
	e.mu.Lock()
	a := e.byID[attemptID]
	e.mu.Unlock()
	if a == nil {
		return nil, executor.ErrNoLogs
	}
	if stream == "stderr" {
		return io.NopCloser(strings.NewReader("")), nil
	}
	r, err := e.cs.CoreV1().Pods(a.ns).GetLogs(a.name+"-"+host, &corev1.PodLogOptions{Container: containerName}).Stream(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return nil, executor.ErrNoLogs
	case apierrors.IsBadRequest(err):
		// The container has not started yet.
		return io.NopCloser(strings.NewReader("")), nil
	case err != nil:
		return nil, err
	}
	if offset > 0 {
		if _, err := io.CopyN(io.Discard, r, offset); err != nil && err != io.EOF {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Instances tells each instance's pod, its node and phase, from the cache.
func (e *Executor) Instances(attemptID string) []executor.Instance {
	e.mu.Lock()
	a := e.byID[attemptID]
	e.mu.Unlock()
	if a == nil {
		return nil
	}
	pods := e.podsOf(a)
	out := make([]executor.Instance, len(pods))
	for i, p := range pods {
		out[i].Host = "algo-" + strconv.Itoa(i+1)
		if p != nil {
			out[i].Name, out[i].Node, out[i].Phase = p.Name, p.Spec.NodeName, string(p.Status.Phase)
		}
	}
	return out
}
