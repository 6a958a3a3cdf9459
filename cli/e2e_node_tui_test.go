package cli

import (
	"fmt"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"os"
	"strings"
	"testing"
)

// TestExplorerAttachesToTheClusterServeRunsOnItsDataDir starts the explorer
// on the data dir of a running serve: it reads that cluster (before, it
// started a second one there, which failed with "address already in use").
func TestExplorerAttachesToTheClusterServeRunsOnItsDataDir(t *testing.T) {
	stateDir(t)
	cp := announced(t, "/registry/configmaps/default/served", "v")
	dir := cp.Cluster().DataDir()
	s := startTUI(t, "--data-dir", dir)
	s.waitText(fmt.Sprintf("the bundled cluster in %s (pid %d, started by etcdscope serve)", dir, os.Getpid()), "configmaps")
	s.keys("4")
	s.waitText("export ETCDCTL_ENDPOINTS=" + strings.Join(cp.Cluster().Endpoints(), ","))
}

// TestExplorerHeaderNamesTheNodesManifest starts the explorer with no
// connection flag on a kubeadm node's files: it reads the node's etcd and
// says where it found it.
func TestExplorerHeaderNamesTheNodesManifest(t *testing.T) {
	stateDir(t)
	e, _ := tlsEtcd(t)
	s := startTUI(t, "--host-root", clitest.KubeadmNode(t, e.Endpoint, e.TLS, ""))
	s.waitText("etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml", "configmaps")
}
