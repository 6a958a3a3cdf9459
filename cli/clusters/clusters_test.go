package clusters

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
)

func TestNamedReadsTheClusterWithPathsFromTheFilesDirectory(t *testing.T) {
	path := clitest.UserConfig(t, `clusters:
- name: prod
  endpoints: [https://10.0.0.1:2379, https://10.0.0.2:2379]
  cacert: pki/ca.crt
  cert: /etc/pki/client.crt
  key: /etc/pki/client.key
  user: viewer
  encryption-config: enc.yaml
- name: last-night
  db: /backups/snapshot.db
`)
	if got, _ := Path(); got != path {
		t.Errorf("Path() = %s, want %s", got, path)
	}
	cl, err := Named("prod")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if strings.Join(cl.Endpoints, ",") != "https://10.0.0.1:2379,https://10.0.0.2:2379" || cl.CACert != filepath.Join(dir, "pki/ca.crt") ||
		cl.Cert != "/etc/pki/client.crt" || cl.Key != "/etc/pki/client.key" || cl.User != "viewer" || cl.EncryptionConfig != filepath.Join(dir, "enc.yaml") {
		t.Errorf("prod = %+v", cl)
	}
	if cl, err := Named("last-night"); err != nil || cl.DB != "/backups/snapshot.db" || cl.Source() != "data file /backups/snapshot.db" {
		t.Errorf("last-night = %+v, %v", cl, err)
	}
	_, err = Named("staging")
	if want := `no cluster "staging" in config file ` + path + ": it names prod, last-night"; err == nil || err.Error() != want {
		t.Errorf("unknown name: %v, want %q", err, want)
	}
}

func TestNamedWithoutAFileSaysWhereItLooked(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	_, err := Named("prod")
	want := `no cluster "prod": there is no config file ` + filepath.Join(home, "etcdscope", "config.yaml") + " to name it"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if c, err := Load(filepath.Join(home, "etcdscope", "config.yaml")); c != nil || err != nil {
		t.Errorf("Load of no file: %v, %v; want no config and no error", c, err)
	}
}

func TestLoadRefusesWhatTheFileMustNotSay(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"password", "clusters:\n- name: prod\n  endpoints: [a:1]\n  user: root\n  password: hunter2\n", `cluster "prod": password: the file holds paths, never secrets`},
		{"user with a password", "clusters:\n- name: prod\n  endpoints: [a:1]\n  user: root:hunter2\n", `cluster "prod": user: a name, not name:password`},
		{"unknown field", "clusters:\n- name: prod\n  endpoint: a:1\n", `unknown field "endpoint"`},
		{"unknown top-level field", "contexts: []\n", `unknown field "contexts"`},
		{"damaged", "clusters: [\n", "did not find expected node content"},
		{"two sources", "clusters:\n- name: prod\n  endpoints: [a:1]\n  db: x.db\n", `cluster "prod": endpoints and db name two sources`},
		{"no source", "clusters:\n- name: prod\n  cacert: ca.crt\n", `cluster "prod" names no source`},
		{"named twice", "clusters:\n- name: a\n  db: x\n- name: a\n  db: y\n", `cluster "a" is named twice`},
		{"reserved", "clusters:\n- name: bundled\n  db: x\n", `cluster "bundled": the name is taken`},
		{"no name", "clusters:\n- db: x\n", "cluster 1 has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := clitest.UserConfig(t, tc.body)
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "config file "+path+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line naming %s and saying %q", msg, path, tc.want)
			}
		})
	}
}

func TestLoadRefusesAFileOthersMayWrite(t *testing.T) {
	path := clitest.UserConfig(t, "clusters: []\n")
	for mode, want := range map[os.FileMode]string{0o620: "writable by its group (mode 0620): chmod go-w " + path, 0o646: "writable by others (mode 0646)"} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mode %04o: %v, want %q", mode, err, want)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("mode 0644: %v", err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Skipf("cannot give the file to another user: %v", err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534, not you") {
		t.Errorf("a file of uid 65534: %v", err)
	}
}
