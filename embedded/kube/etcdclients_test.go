package kube

import (
	"bufio"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/storage"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
)

func TestKubeAPIServerConnectsToEachMemberOnceNotOncePerResource(t *testing.T) {
	if storageDials == nil {
		t.Error("kube-apiserver's storage dials etcd for every resource")
	} else if n := storageDials.dialed(); n != 1 {
		t.Errorf("kube-apiserver's storage dialed %d transports, want the one of the cluster", n)
	}
	for _, ep := range testCluster.Endpoints() {
		u, err := url.Parse(ep)
		if err != nil {
			t.Fatal(err)
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			t.Fatal(err)
		}
		// Without sharing, 70: one per resource stored, and the
		// compactor's, the health checks' and the size monitor's. Left:
		// the shared one, the controllers' leases and the test's own
		// clients.
		if n := connectionsTo(t, port); n > 8 {
			t.Errorf("%d connections to the member at %s, want a few", n, ep)
		}
	}
	// Reads from the watch cache need etcd's RequestWatchProgress, which
	// kube-apiserver checks for on the endpoints of the shared client.
	deadline := time.Now().Add(30 * time.Second)
	for !etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
		if time.Now().After(deadline) {
			t.Fatal("kube-apiserver never found that etcd supports RequestWatchProgress")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connectionsTo counts the established TCP connections to port on the
// loopback, from /proc/net/tcp and tcp6.
func connectionsTo(t *testing.T, port int) int {
	t.Helper()
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			t.Skipf("no %s: %v", name, err)
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			// sl local_address rem_address st ...; 01 is ESTABLISHED
			if len(fields) < 4 || fields[3] != "01" {
				continue
			}
			_, remote, ok := strings.Cut(fields[2], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseInt(remote, 16, 32); err == nil && int(p) == port {
				n++
			}
		}
		f.Close()
	}
	return n
}
