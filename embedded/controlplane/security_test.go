package controlplane

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// TestStartRefusesADataDirAnotherUserPrepared takes the part of another
// local user, who prepared the data dir (so it runs as root only); each
// refusal comes before Kubernetes' control plane runs.
func TestStartRefusesADataDirAnotherUserPrepared(t *testing.T) {
	other := etcdtest.OtherUser(t)
	plantKey := func(dir string, mode os.FileMode) string {
		pki := filepath.Join(dir, "kubernetes", "pki")
		os.MkdirAll(pki, 0o700)
		key := filepath.Join(pki, "ca.key")
		os.WriteFile(key, []byte("-----BEGIN EC PRIVATE KEY-----\n"), mode)
		os.Chmod(key, mode)
		return key
	}
	other.ExpectRefusals(t, []etcdtest.Refusal{
		{Name: "theirs, with a kubeconfig linked to my file", Want: "data dir DIR belongs to uid UID, not you (uid 0): use a directory of your own", Prepare: func(t *testing.T, dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "kubeconfig"))
			other.Chown(t, dir)
		}},
		{Name: "their kubernetes dir", Want: "data dir DIR/kubernetes belongs to uid UID", Prepare: func(t *testing.T, dir, _ string) {
			os.Mkdir(filepath.Join(dir, "kubernetes"), 0o700)
			other.Chown(t, filepath.Join(dir, "kubernetes"))
		}},
		{Name: "their CA key", Want: "DIR/kubernetes/pki/ca.key belongs to uid UID, not you (uid 0): remove it", Prepare: func(t *testing.T, dir, _ string) {
			other.Chown(t, plantKey(dir, 0o600))
		}},
		{Name: "a CA key others could read", Want: "DIR/kubernetes/pki/ca.key is readable by group or others (mode 0644)", Prepare: func(t *testing.T, dir, _ string) {
			plantKey(dir, 0o644)
		}},
		{Name: "a log linked to my file", Want: "DIR/kubernetes.log is a symbolic link: remove it", Prepare: func(t *testing.T, dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "kubernetes.log"))
		}},
	}, func(dir string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cp, err := Start(ctx, Options{Cluster: embedded.Options{Members: 1, DataDir: dir}, APIServer: true})
		if err == nil {
			cp.Close()
		}
		return err
	})
}
