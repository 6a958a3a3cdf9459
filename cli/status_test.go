package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// startEtcd runs a bundled cluster in the test process and returns the
// endpoints flag for etcdscope and a client for writing. The cluster's
// client certificate is set for the test (useTLS).
func startEtcd(t testing.TB, members int) (*embedded.Cluster, string, *clientv3.Client) {
	t.Helper()
	c, cli := etcdtest.StartBundled(t, members)
	useTLS(t, c.TLS())
	return c, strings.Join(c.Endpoints(), ","), cli
}

// useTLS sets the ETCDCTL_* variables of the bundled cluster's client
// certificate for the test, as pasting serve's line into a shell does, so
// that etcdscope run in-process reaches it with --endpoints alone.
func useTLS(t testing.TB, f *embedded.TLSFiles) {
	t.Setenv("ETCDCTL_CACERT", f.CA)
	t.Setenv("ETCDCTL_CERT", f.Cert)
	t.Setenv("ETCDCTL_KEY", f.Key)
}

// tlsFlags are the flags of the client certificate, for etcdscope or
// etcdctl in a process of its own, which runs without the test's ETCDCTL_*
// variables.
func tlsFlags(f *embedded.TLSFiles) []string {
	return []string{"--cacert", f.CA, "--cert", f.Cert, "--key", f.Key}
}

func TestStatusListsEveryMember(t *testing.T) {
	c, endpoints, _ := startEtcd(t, 3)
	if err := c.StopMember(2); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Revision int64 `json:"revision"`
		Members  []struct {
			Name        string `json:"name"`
			Leader      bool   `json:"leader"`
			Unreachable string `json:"unreachable"`
		} `json:"members"`
	}
	out := run(t, "--endpoints", endpoints, "status", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	var leaders, down int
	for _, m := range doc.Members {
		if m.Leader {
			leaders++
		}
		if m.Unreachable != "" {
			down++
		}
	}
	if len(doc.Members) != 3 || leaders != 1 || down != 1 {
		t.Errorf("members %+v: want 3, one leader, one unreachable", doc.Members)
	}
	table := run(t, "--endpoints", endpoints, "status")
	for _, want := range []string{"LEADER", "etcd-0", "unreachable"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
