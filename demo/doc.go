// Package demo is the simulated control plane of the bundled cluster: what
// runs around a real API server so that a fresh cluster looks and moves like
// one made by kubeadm.
//
// Every component talks to the API server only, through client-go, as the
// real ones do: etcd speaks only to the API server, which pushes watch
// events to the components, which answer with writes of their own.
//
// kube-controller-manager and kube-scheduler are not here: the bundled
// control plane runs Kubernetes' own (embedded/kube). What is simulated is
// what needs a machine, a container runtime or a storage system:
//
//   - N kubelets register Nodes, renew their Lease in kube-node-lease every
//     10 s, and move the pods bound to them through ContainerCreating to
//     Running (or Succeeded), with IPs, conditions, container statuses and
//     restart counts, and delete them when they end.
//   - a CSI-like provisioner gives each PersistentVolumeClaim of the
//     "standard" StorageClass a PersistentVolume made for it, which the PV
//     controller binds, and deletes the volume once it is released.
//   - kube-proxy on each node and CoreDNS watch Services and EndpointSlices
//     read-only and record what they would program.
//
// Each component acts as its own user (system:node:node-1 in system:nodes,
// system:kube-proxy, ...), so the API server's audit says who wrote,
// and reports what its informers saw to Reactions, so that a write can be
// followed to the watchers that reacted to it. A load profile (Calm, Busy)
// keeps the writes flowing with the script in load.go.
package demo
