package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
)

// ClusterOptions configure StartCluster.
type ClusterOptions struct {
	// Version is the etcd release line the members run ("3.4", "3.5",
	// "3.6", "3.7"); "" means 3.7, the bundled etcd's.
	Version string
}

// Cluster is etcd members as separate processes on loopback ports, one
// Raft cluster.
type Cluster struct {
	Members []*External
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.Members))
	for i, m := range c.Members {
		eps[i] = m.Endpoint
	}
	return eps
}

// Client is a client of every member, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("client for %s: %v", strings.Join(c.Endpoints(), ","), err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// StartCluster runs an n-member etcd cluster until the test ends, members
// named member-0, member-1, …, and waits until it has a leader.
func StartCluster(t testing.TB, n int, opts ClusterOptions) *Cluster {
	t.Helper()
	bin := VersionBinary(t, cmpOr(opts.Version, "3.7"))
	c, err := LaunchCluster(bin, t.TempDir(), n, nil)
	if err != nil {
		t.Fatalf("start a %d-member etcd cluster: %v", n, err)
	}
	t.Cleanup(c.Stop)
	return c
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// MemberSpec is one member of a cluster LaunchCluster is about to start.
type MemberSpec struct {
	Name, PeerURL, InitialCluster, DataDir string
}

// LaunchCluster runs n etcd members outside of a test, each in dir/NAME on
// free loopback ports picked now, and waits until the cluster has a leader.
// prepare, when set, is called for each member before it starts (to
// restore a snapshot into its data dir, as etcdutl snapshot restore does:
// etcd then serves that data and ignores the initial cluster).
func LaunchCluster(bin, dir string, n int, prepare func(MemberSpec) error) (*Cluster, error) {
	ports, err := embedded.FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("member-%d=http://127.0.0.1:%d", i, ports[2*i]))
	}
	c := &Cluster{}
	for i := range n {
		mdir := filepath.Join(dir, fmt.Sprintf("member-%d", i))
		if err := os.MkdirAll(mdir, 0o700); err != nil {
			return nil, err
		}
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		e := &External{
			Endpoint: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			DataDir:  filepath.Join(mdir, "data"),
			logPath:  filepath.Join(mdir, "etcd.log"),
			bin:      bin,
			// A member restored from a large snapshot loads its index
			// for a while before it serves: a bound, not a wait.
			ready: 2 * time.Minute,
		}
		if prepare != nil {
			spec := MemberSpec{Name: fmt.Sprintf("member-%d", i), PeerURL: peer, InitialCluster: strings.Join(initial, ","), DataDir: e.DataDir}
			if err := prepare(spec); err != nil {
				return nil, err
			}
		}
		e.args = []string{
			"--name", fmt.Sprintf("member-%d", i),
			"--data-dir", e.DataDir,
			"--listen-peer-urls", peer,
			"--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			"--listen-client-urls", e.Endpoint,
			"--advertise-client-urls", e.Endpoint,
			"--logger", "zap",
			"--log-outputs", e.logPath,
			"--quota-backend-bytes", fmt.Sprint(8 << 30),
		}
		c.Members = append(c.Members, e)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range c.Members {
		wg.Go(func() { errs[i] = m.run() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, m := range c.Members {
			if m.cmd != nil {
				m.Stop()
			}
		}
		return nil, err
	}
	return c, c.waitLeader(20 * time.Second)
}

// Stop stops every member.
func (c *Cluster) Stop() {
	for _, m := range c.Members {
		m.Stop()
	}
}

// waitLeader waits until a member says it has a leader.
func (c *Cluster) waitLeader(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	for {
		st, err := cli.Status(ctx, c.Members[0].Endpoint)
		if err == nil && st.Leader != 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no leader after %v: %v", timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Start runs a member that Stop ended again, on the same data and ports,
// and waits until it serves.
func (e *External) Start() error {
	select {
	case <-e.exited:
		return e.run()
	default:
		return errors.New("etcd at " + e.Endpoint + " runs already")
	}
}

// AlterValue rewrites, in the stopped member's bbolt file, the value of
// the newest revision of key to value, as a bad disk would: the mvcc
// record keeps its revision, version and structure, so the member starts
// and serves the altered value without knowing. It fails when the member
// runs or its file holds no revision of key.
func (e *External) AlterValue(key string, value []byte) error {
	if err := e.stopped(); err != nil {
		return err
	}
	return AlterValue(e.DataDir, key, value)
}

// stopped is an error while e runs: its file is not to be altered then.
func (e *External) stopped() error {
	select {
	case <-e.exited:
		return nil
	default:
		return errors.New("etcd at " + e.Endpoint + " runs: stop it before altering its file")
	}
}

// updateKeys runs fn in a write transaction on the "key" bucket of the
// bbolt file of dataDir, where etcd keeps every revision of every key.
func updateKeys(dataDir string, fn func(b *bolt.Bucket) error) error {
	db, err := bolt.Open(filepath.Join(dataDir, "member", "snap", "db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return errors.New("the file has no key bucket")
		}
		return fn(b)
	})
}

// AlterValue is External.AlterValue on the data dir of a member that does
// not run.
func AlterValue(dataDir, key string, value []byte) error {
	return updateKeys(dataDir, func(b *bolt.Bucket) error {
		// Records are keyed by revision (8 bytes main, '_', 8 bytes sub,
		// 't' after a deletion): the newest of key is the last found.
		cur := b.Cursor()
		for rk, rv := cur.Last(); rk != nil; rk, rv = cur.Prev() {
			var kv mvccpb.KeyValue
			if err := proto.Unmarshal(rv, &kv); err != nil {
				return fmt.Errorf("record %x: %w", rk, err)
			}
			if string(kv.Key) != key {
				continue
			}
			if len(rk) > 17 {
				return fmt.Errorf("%s was deleted last (record %x)", key, rk)
			}
			kv.Value = value
			out, err := proto.Marshal(&kv)
			if err != nil {
				return err
			}
			return b.Put(append([]byte(nil), rk...), out)
		}
		return fmt.Errorf("no revision of %s in %s", key, dataDir)
	})
}

// RemoveKey deletes, in the stopped member's bbolt file, every revision of
// key, as a disk that lost the page holding it would: the member starts
// without the key, and nothing in its file says it had one. It fails when
// the member runs or its file holds no revision of key.
func (e *External) RemoveKey(key string) error {
	if err := e.stopped(); err != nil {
		return err
	}
	return updateKeys(e.DataDir, func(b *bolt.Bucket) error {
		var records [][]byte
		err := b.ForEach(func(rk, rv []byte) error {
			var kv mvccpb.KeyValue
			if err := proto.Unmarshal(rv, &kv); err != nil {
				return fmt.Errorf("record %x: %w", rk, err)
			}
			if string(kv.Key) == key {
				records = append(records, append([]byte(nil), rk...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(records) == 0 {
			return fmt.Errorf("no revision of %s in %s", key, e.DataDir)
		}
		for _, rk := range records {
			if err := b.Delete(rk); err != nil {
				return err
			}
		}
		return nil
	})
}
