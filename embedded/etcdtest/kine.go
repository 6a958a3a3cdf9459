package etcdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// kineModule is kine's module, whose version bench/kine/go.mod pins.
const kineModule = "github.com/k3s-io/kine"

// KineOptions configures a kine process.
type KineOptions struct {
	// Socket listens on a unix socket (dir/kine.sock) as k3s' kine does,
	// instead of a loopback port.
	Socket bool
	// TLS serves clients over TLS with client-certificate authentication,
	// certificates from embedded.EnsureTLS in the process's dir.
	TLS bool
	// Dir holds state.db (and, with Socket, kine.sock); "" is a new
	// temporary directory of the test. A state.db already there is served.
	Dir string
	// DB is the SQLite file when not Dir/state.db (k3s keeps it in
	// server/db/, its socket in server/).
	DB string
	// CompactInterval is kine's --compact-interval; 0 leaves compaction to
	// clients (kine's default), as kube-apiserver does it.
	CompactInterval time.Duration
	// Params is the query of kine's SQLite DSN; "" is K3sSQLiteParams, as
	// k3s opens the file (go-sqlite3's own defaults, a rollback journal
	// synced at every commit, write a few hundred keys a second).
	Params string
	// Endpoint, when set, is kine's --endpoint instead of the SQLite
	// file: a PostgreSQL database (postgres://...).
	Endpoint string
}

// K3sSQLiteParams is kine's sqlite.DefaultParams, the DSN k3s' default
// datastore opens db/state.db with: a WAL journal, synced at checkpoints.
const K3sSQLiteParams = "_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_stmt_cache_size=20&cache=shared"

// Kine is a running kine: the etcd API over a SQLite file.
type Kine struct {
	*External
	// DB is the SQLite file kine keeps its log of revisions in.
	DB string
}

// KineBinary returns kine built from bench/kine (cgo), or skips the test
// when it cannot be built, and fails it instead under RequireEnv.
func KineBinary(t testing.TB) string {
	t.Helper()
	return VersionBinary(t, "kine")
}

// StartKine runs kine until the test ends, and waits until it serves.
func StartKine(t testing.TB, opts KineOptions) *Kine {
	t.Helper()
	bin := KineBinary(t)
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	k, err := LaunchKine(bin, opts)
	if err != nil {
		t.Fatalf("start kine: %v", err)
	}
	t.Cleanup(func() { k.Stop() })
	return k
}

// LaunchKine runs kine outside of a test: state.db in opts.Dir, its log in
// opts.Dir/kine.log, on a free loopback port (or opts.Dir/kine.sock), in a
// process group of its own. It returns once kine serves.
func LaunchKine(bin string, opts KineOptions) (*Kine, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	k := &Kine{External: &External{DataDir: dir, logPath: filepath.Join(dir, "kine.log"), logFile: true}, DB: opts.DB}
	if k.DB == "" {
		k.DB = filepath.Join(dir, "state.db")
	}
	if err := os.MkdirAll(filepath.Dir(k.DB), 0o700); err != nil {
		return nil, err
	}
	k.Version = "kine " + kineVersion()
	scheme, listen := "http", ""
	if opts.TLS {
		if k.TLS, err = embedded.EnsureTLS(filepath.Join(dir, "tls")); err != nil {
			return nil, err
		}
		if k.tlsConfig, err = k.TLS.ClientConfig(); err != nil {
			return nil, err
		}
		scheme = "https"
	}
	if opts.Socket {
		sock := filepath.Join(dir, "kine.sock")
		listen, k.Endpoint = "unix://"+sock, "unix://"+sock
		if opts.TLS {
			// clientv3 checks a unixs:// server's certificate for the
			// socket's file name, which EnsureTLS's does not name.
			return nil, fmt.Errorf("kine on a socket serves plain gRPC here, as k3s' does by default: give Socket or TLS")
		}
	} else {
		ports, err := embedded.FreePorts(1)
		if err != nil {
			return nil, err
		}
		listen = fmt.Sprintf("127.0.0.1:%d", ports[0])
		k.Endpoint = scheme + "://" + listen
	}
	k.bin = bin
	endpoint := "sqlite://" + k.DB + dsnQuery(opts.Params)
	if opts.Endpoint != "" {
		endpoint = opts.Endpoint
	}
	k.args = []string{
		"--listen-address", listen,
		"--endpoint", endpoint,
		// 0 serves no metrics: kine's default is :8080 on every address.
		"--metrics-bind-address", "0",
	}
	if opts.CompactInterval > 0 {
		k.args = append(k.args, "--compact-interval", opts.CompactInterval.String())
	}
	if k.TLS != nil {
		k.args = append(k.args, "--server-cert-file", k.TLS.ServerCert, "--server-key-file", k.TLS.ServerKey, "--trusted-ca-file", k.TLS.CA)
	}
	k.ready = 20 * time.Second
	if err := k.run(); err != nil {
		return nil, err
	}
	return k, nil
}

func dsnQuery(params string) string {
	if params == "" {
		params = K3sSQLiteParams
	}
	return "?" + params
}

// kineVersion is the kine version bench/kine pins, "v0.17.5", or "" when
// the repository is not found.
func kineVersion() string {
	repo, err := RepoRoot(".")
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(repo, "bench", "kine", "go.mod"))
	if err != nil {
		return ""
	}
	return requiredVersion(b, kineModule)
}

// KineEtcd runs kine for a suite that runs against every etcd: an Etcd
// whose Version is "kine".
func KineEtcd(t *testing.T) Etcd {
	t.Helper()
	k := StartKine(t, KineOptions{})
	return Etcd{Version: "kine", Endpoints: []string{k.Endpoint}, Client: k.Client(t), Restart: k.Restart}
}

// Delete deletes key as kube-apiserver does, in a transaction on its mod
// revision: kine refuses DeleteRange, and etcd accepts this too. A key that
// is not there is no error.
func Delete(ctx context.Context, cli *clientv3.Client, key string) error {
	for {
		got, err := cli.Get(ctx, key)
		if err != nil || len(got.Kvs) == 0 {
			return err
		}
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", got.Kvs[0].ModRevision)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil || resp.Succeeded {
			return err
		}
	}
}
