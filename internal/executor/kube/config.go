package kube

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadConfig finds the API server: the kubeconfig file given, else
// $KUBECONFIG or ~/.kube/config, else the pod's service account when sharq
// runs in the cluster.
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv("KUBECONFIG") != "" || fileExists(rules.GetDefaultFilename()) {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, errors.New("no Kubernetes cluster: give --kubeconfig, set $KUBECONFIG, or run sharq in a pod with a service account")
	}
	return cfg, err
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}
