// Package kube runs Kubernetes' own control plane in this process, as k3s
// does: kube-apiserver (cmd/kube-apiserver/app), kube-controller-manager
// (cmd/kube-controller-manager/app) and kube-scheduler
// (cmd/kube-scheduler/app) of the k8s.io/kubernetes release in go.mod, each
// built from its own options and command line, storing into an etcd
// cluster it is given.
//
// kube-apiserver serves every group a default kube-apiserver serves,
// apiextensions and the aggregator included, with Node and RBAC
// authorization, the default admission plugins and NodeRestriction, service
// account tokens signed with a key kept in the dir, an audit log, and its
// own compactor at Options.CompactionInterval. The controller manager runs
// its default controllers and the scheduler its default profile, each as
// its own user with a client certificate, as kubeadm sets them up.
//
// Identities are client certificates signed by a CA kept in Dir/pki: the
// admin (system:masters), a viewer bound through RBAC to get, list and
// watch everything, the two components, and any Options.Users.
//
// Use:
//
//	cp, err := kube.Start(ctx, kube.Options{Dir: dir, Etcd: kube.Etcd{Endpoints: eps}, Log: f})
//	defer cp.Close()
//	<-cp.Ready()                      // /readyz answers ok
//	cp.WriteKubeconfig(path)          // contexts "etcdscope" (admin) and "etcdscope-viewer"
//	cfg := cp.RESTConfig(kube.AdminUser)
//
// klog is one per process: the three components log to the Options.Log of
// the control plane started last, never to the terminal. The controller
// manager takes a process-wide name for its informers and never gives it
// back, so a process runs one control plane with controllers. The
// controller manager and the scheduler run with leader election off, since
// both end the process when they lose a lease; their kube-system Leases are
// held beside them with client-go's elector, and each starts once it holds
// its own.
package kube
