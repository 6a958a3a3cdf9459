package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// The tests here take the part of another local user (etcdtest.OtherUser),
// so they run as root only.

// openDir is a data dir others may look into but not write: the keys must
// keep them out on their own.
func openDir(t *testing.T) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "etcdscope-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	dir := filepath.Join(parent, "scope")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{parent, dir} {
		os.Chmod(d, 0o755)
	}
	return dir
}

// giveCopy copies a file of the data dir to where user may read it.
func giveCopy(t *testing.T, user etcdtest.User, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, b, 0o400)
	}
	if err != nil {
		t.Fatal(err)
	}
	user.Chown(t, dst)
}

func start(t *testing.T, opts embedded.Options) (*embedded.Cluster, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := embedded.Start(ctx, opts)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestAnotherUserCannotWriteToTheClusterNorReadItsKeys(t *testing.T) {
	other := etcdtest.OtherUser(t)
	etcdctl := etcdtest.Etcdctl(t)
	dir := openDir(t)
	c, err := start(t, embedded.Options{Members: 1, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The CA certificate is no secret: the other user may hold a copy. The
	// client's pair, given to them, shows what the refusals are for.
	shared, files := filepath.Dir(dir), c.TLS()
	for src, dst := range map[string]string{files.CA: "ca.crt", files.Cert: "client.crt", files.Key: "client.key"} {
		giveCopy(t, other, src, filepath.Join(shared, dst))
	}
	caCopy := filepath.Join(shared, "ca.crt")
	https := c.Endpoints()[0]
	given := []string{"--endpoints", https, "--cacert", caCopy, "--cert", filepath.Join(shared, "client.crt"), "--key", filepath.Join(shared, "client.key")}
	if out, err := other.Run(etcdctl, append(given, "put", "/given", "1")...); err != nil {
		t.Fatalf("etcdctl put with a copy of the client's pair: %v\n%s", err, out)
	}
	const key = "/registry/clusterrolebindings/anonymous-admin"
	for name, flags := range map[string][]string{
		"no credentials":                  {"--endpoints", https},
		"the CA only":                     {"--endpoints", https, "--cacert", caCopy},
		"no verification, no certificate": {"--endpoints", https, "--insecure-skip-tls-verify"},
		"plain HTTP":                      {"--endpoints", strings.Replace(https, "https://", "http://", 1)},
	} {
		out, err := other.Run(etcdctl, append(flags, "--dial-timeout", "2s", "--command-timeout", "3s", "put", key, "cluster-admin")...)
		if err == nil || strings.Contains(out, "OK") {
			t.Errorf("%s: etcdctl put as %s succeeded: %s", name, other.Name, out)
		}
	}
	if resp, err := etcdtest.Client(t, c).Get(t.Context(), key); err != nil || resp.Count != 0 {
		t.Errorf("read back with the data dir's certificate: %v, %v; want no key", resp, err)
	}
	tlsDir := filepath.Dir(c.TLS().Key)
	for _, f := range []string{c.TLS().Key, c.TLS().ServerKey, filepath.Join(tlsDir, "ca.key")} {
		if out, err := other.Run("/bin/cat", f); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s read %s: %v %s", other.Name, f, err, out)
		}
	}
}

func TestStartRefusesADataDirAnotherUserPrepared(t *testing.T) {
	other := etcdtest.OtherUser(t)
	other.ExpectRefusals(t, []etcdtest.Refusal{
		{Name: "theirs", Want: "data dir DIR belongs to uid UID, not you (uid 0): use a directory of your own", Prepare: func(t *testing.T, dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "etcd.log"))
			other.Chown(t, dir)
		}},
		{Name: "writable by others", Want: "data dir DIR is writable by others (mode 0777): chmod go-w DIR", Prepare: func(t *testing.T, dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "etcd.log"))
			os.Chmod(dir, 0o777)
		}},
		{Name: "their tls dir", Want: "data dir DIR/tls belongs to uid UID", Prepare: func(t *testing.T, dir, _ string) {
			os.Mkdir(filepath.Join(dir, "tls"), 0o700)
			other.Chown(t, filepath.Join(dir, "tls"))
		}},
		{Name: "their CA key", Want: "DIR/tls/ca.key belongs to uid UID, not you (uid 0): remove it", Prepare: func(t *testing.T, dir, _ string) {
			os.Mkdir(filepath.Join(dir, "tls"), 0o700)
			os.WriteFile(filepath.Join(dir, "tls", "ca.key"), []byte("theirs"), 0o600)
			other.Chown(t, filepath.Join(dir, "tls", "ca.key"))
		}},
		{Name: "a log linked to my file", Want: "DIR/etcd.log is a symbolic link: remove it", Prepare: func(t *testing.T, dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "etcd.log"))
			other.Chown(t, filepath.Join(dir, "etcd.log"))
		}},
	}, func(dir string) error {
		_, err := start(t, embedded.Options{Members: 1, DataDir: dir})
		return err
	})
}
