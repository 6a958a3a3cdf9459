package ui

import "context"

// NamedCluster is one cluster the explorer can switch to: one of the config
// file's named clusters, the node's own etcd that discovery found, or the
// bundled cluster.
type NamedCluster struct {
	// Name is what --cluster takes and :ctx NAME switches to.
	Name string
	// What says where it is, as the header would: "etcd of this kubeadm
	// node, from /etc/kubernetes/manifests/kube-apiserver.yaml".
	What string
	// Current marks the cluster the explorer shows.
	Current bool
}

// Clusters lists the clusters :ctx offers and opens the one picked, so the
// explorer switches without restarting. cli implements it; the UI never
// opens a source itself.
type Clusters interface {
	// List is the clusters to offer, the current one marked.
	List(ctx context.Context) ([]NamedCluster, error)
	// Open reads the cluster named name: the Options it returns replace
	// the explorer's (its Source, Description, Export, Members...), and
	// closeFn releases them when the explorer switches again or quits.
	// An error leaves the current cluster in place.
	Open(ctx context.Context, name string) (opts Options, closeFn func(), err error)
}
