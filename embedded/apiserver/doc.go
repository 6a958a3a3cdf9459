// Package apiserver is etcdscope's built-in Kubernetes API server: what
// real kubectl and client-go talk to in bundled mode, storing into the
// bundled etcd cluster exactly as kube-apiserver does.
//
// It is assembled from kube-apiserver's own parts rather than imitating
// them: k8s.io/apiserver's generic API server (discovery, aggregated
// discovery, /version, OpenAPI v2 and v3, watch with bookmarks and
// WatchList, the four patch types including server-side apply, field
// validation, Table output, Status errors, the 3 MiB body limit) serving
// kubernetes' own registries from k8s.io/kubernetes/pkg/registry
// (strategies, validation, defaults, table printers, field selectors,
// subresources), its storage factory (storage versions and key layout:
// /registry/minions, /registry/services/specs, ...) and k8s.io/apiserver's
// etcd3 storage.Interface behind the watch cache. Values are protobuf in the
// storage version, with resourceVersion taken from etcd's mod revision;
// events live on a one-hour etcd lease; an EncryptionConfiguration file
// encrypts values at rest (k8s:enc:aescbc:v1:...).
//
// The request path is the one kube-apiserver runs: bearer-token
// authentication, authorization (AdminGroup may do everything, ViewerGroup
// only get, list and watch), mutating admission (NamespaceLifecycle,
// DefaultTolerationSeconds, the ServiceAccount plugin's default), strategy
// validation and validating admission, encoding, the etcd transaction.
// Every write is reported to subscribers with the time each stage took.
// kube-controller-manager's namespace controller runs in-process, so that
// deleting a namespace deletes what it holds.
//
// Use:
//
//	s, err := apiserver.Start(ctx, apiserver.Options{Etcd: etcdConfig})
//	defer s.Close()
//	s.WriteKubeconfig(path) // contexts "etcdscope" (admin) and "etcdscope-viewer"
//	traces, cancel := s.Writes().Subscribe(256)
//	for t := range traces { ... t.Stages, t.Key, t.Revision ... }
//
// What it leaves out: no kubelets, scheduler or controllers other than the
// namespace controller run here (pods stay Pending unless someone writes
// their status); there is no garbage collector, so dependents of a deleted
// owner stay; service cluster IPs and node ports are allocated in memory,
// not recorded in etcd; no service account tokens are issued; the API
// groups served are core, apps, batch, coordination.k8s.io,
// discovery.k8s.io, storage.k8s.io and rbac.authorization.k8s.io at their
// GA versions.
//
// The server runs on its own goroutines; a slow client or subscriber
// delays nobody else. Logs go to Options.Log, never to the terminal.
package apiserver
