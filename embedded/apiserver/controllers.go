package apiserver

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	restclient "k8s.io/client-go/rest"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

// startNamespaceController runs kube-controller-manager's namespace
// controller in-process: it empties a deleted namespace and removes its
// "kubernetes" finalizer, without which a namespace deletion (and
// kubectl's waiting for it) never finishes. It stops when ctx ends; the
// returned channel closes then.
func (s *Server) startNamespaceController(ctx context.Context, loopback *restclient.Config) (<-chan struct{}, error) {
	cfg := restclient.CopyConfig(loopback)
	cfg.QPS, cfg.Burst = 100, 500 // kube-controller-manager raises its limits for this controller too
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	nc := namespacecontroller.NewNamespaceController(ctx, client, meta, client.Discovery().ServerPreferredNamespacedResources,
		s.informers.Core().V1().Namespaces(), 5*time.Minute, v1.FinalizerKubernetes)
	if nc == nil {
		return nil, fmt.Errorf("namespace controller: not created")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc.Run(ctx, 2)
	}()
	return done, nil
}
