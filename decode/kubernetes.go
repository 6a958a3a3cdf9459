package decode

// KubernetesVersion is the Kubernetes release whose API types this build
// decodes (the staging module k8s.io/api v0.37.2 is cut from v1.37.2), and
// the release the bundled control plane runs and reports: the API server's
// /version, the kubelets' node info, the components' user agents.
const KubernetesVersion = "v1.37.2"
