package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

func TestClusterFlagReadsTheNamedClusterAndFlagsWin(t *testing.T) {
	stateDir(t)
	e, cli := tlsEtcd(t)
	snapshot := etcdviewtest.SaveSnapshot(t, cli)
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("after-the-snapshot"))
	path := clitest.UserConfig(t, fmt.Sprintf(`clusters:
- name: prod
  endpoints: [%s]
  cacert: %s
  cert: %s
  key: %s
- name: last-night
  db: %s
`, e.Endpoint, e.TLS.CA, e.TLS.Cert, e.TLS.Key, snapshot))
	names := func(args ...string) string {
		t.Helper()
		return strings.Join(strings.Fields(run(t, append([]string{"get", "configmaps", "-o", "name"}, args...)...)), " ")
	}
	if got := names("--cluster", "prod"); got != "configmap/after-the-snapshot configmap/on-the-node" {
		t.Errorf("--cluster prod: %q, want both ConfigMaps", got)
	}
	if got := names("--cluster", "last-night"); got != "configmap/on-the-node" {
		t.Errorf("--cluster last-night: %q, want the snapshot's ConfigMap", got)
	}
	if got := names("--cluster", "prod", "--db", snapshot); got != "configmap/on-the-node" {
		t.Errorf("--cluster prod --db: %q, want --db's file read", got)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	if msg := runFails(t, "ls", "--cluster", "prod", "--endpoints", closed); !strings.Contains(msg, closed) {
		t.Errorf("--cluster prod --endpoints %s: %q, want %[1]s refused", closed, msg)
	}
	if msg := runFails(t, "ls", "--cluster", "prod", "--cacert", "/nonexistent/ca.crt"); !strings.Contains(msg, "/nonexistent/ca.crt") {
		t.Errorf("--cluster prod --cacert: %q, want the flag's file", msg)
	}
	// The cluster is named on the command line: a variable does not point
	// it elsewhere.
	t.Setenv("ETCDCTL_ENDPOINTS", closed)
	if got := names("--cluster", "prod"); got != "configmap/after-the-snapshot configmap/on-the-node" {
		t.Errorf("--cluster prod with ETCDCTL_ENDPOINTS set: %q, want prod read", got)
	}
	want := `Error: no cluster "staging" in config file ` + path + ": it names prod, last-night"
	if msg := runFails(t, "ls", "--cluster", "staging"); msg != want {
		t.Errorf("an unknown name: %q, want %q", msg, want)
	}
}

func TestClusterFlagRefusesAConfigFileThatSaysTooMuch(t *testing.T) {
	stateDir(t)
	for _, tc := range []struct{ name, body, want string }{
		{"password", "clusters:\n- name: prod\n  endpoints: [127.0.0.1:1]\n  user: root\n  password: hunter2\n", `cluster "prod": password: the file holds paths, never secrets`},
		{"unknown field", "clusters:\n- name: prod\n  endpoints: [127.0.0.1:1]\n  ca: ca.crt\n", `unknown field "ca"`},
		{"damaged", "clusters: [\n", "config file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := clitest.UserConfig(t, tc.body)
			if msg := runFails(t, "ls", "--cluster", "prod"); !strings.HasPrefix(msg, "Error: config file "+path+": ") || !strings.Contains(msg, tc.want) {
				t.Errorf("%q, want it to name %s and say %q", msg, path, tc.want)
			}
		})
	}
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	want := `Error: no cluster "prod": there is no config file ` + filepath.Join(home, "etcdscope", "config.yaml") + " to name it"
	if msg := runFails(t, "ls", "--cluster", "prod"); msg != want {
		t.Errorf("no config file: %q, want %q", msg, want)
	}
}
