package embedded

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// TestMain fails the package if any test leaves a goroutine behind: Close
// must stop every member, listener and client it started. Connections between
// members that etcd's peer transport keeps idle end on its 5s read timeout
// (rafthttp.ConnReadTimeout), so the check waits up to twice that.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := waitNoLeaks(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func waitNoLeaks(deadline time.Duration) error {
	end := time.Now().Add(deadline)
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(end) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func startCluster(t *testing.T, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// memberClient is a client pinned to one member's endpoint.
func memberClient(t *testing.T, c *Cluster, i int) *clientv3.Client {
	t.Helper()
	cfg, err := c.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoints = []string{c.Endpoints()[i]}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatalf("client for member %d: %v", i, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, deadline time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", deadline, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaderOf(ms []MemberStatus) (int, bool) {
	for i, m := range ms {
		if m.Running && m.Leader {
			return i, true
		}
	}
	return -1, false
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClusterElectsLeaderAndReplicatesWrites(t *testing.T) {
	c := startCluster(t, Options{})
	ms := c.Members()
	if len(ms) != DefaultMembers {
		t.Fatalf("members = %d, want %d", len(ms), DefaultMembers)
	}
	waitFor(t, "a leader", 10*time.Second, func() bool { _, ok := leaderOf(c.Members()); return ok })
	for _, m := range c.Members() {
		if !m.Running || m.ID == 0 || m.RaftTerm == 0 || m.DBSize == 0 {
			t.Errorf("member %s reports %+v, want running with ID, term and DB size", m.Name, m)
		}
	}

	put, err := memberClient(t, c, 0).Put(ctxT(t), "/registry/test/a", "1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range DefaultMembers {
		resp, err := memberClient(t, c, i).Get(ctxT(t), "/registry/test/a")
		if err != nil {
			t.Fatalf("get through member %d: %v", i, err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "1" || resp.Kvs[0].ModRevision != put.Header.Revision {
			t.Errorf("member %d reads %v, want value 1 at revision %d", i, resp.Kvs, put.Header.Revision)
		}
	}
}

func TestStopLeaderElectsNewLeaderAndRestartCatchesUp(t *testing.T) {
	c := startCluster(t, Options{})
	var old MemberStatus
	waitFor(t, "a leader", 10*time.Second, func() bool {
		i, ok := leaderOf(c.Members())
		if ok {
			old = c.Members()[i]
		}
		return ok
	})
	oldIdx := -1
	for i, m := range c.Members() {
		if m.ID == old.ID {
			oldIdx = i
		}
	}
	if err := c.StopMember(oldIdx); err != nil {
		t.Fatal(err)
	}
	if c.Members()[oldIdx].Running {
		t.Fatal("stopped member still reports running")
	}

	var newLeader MemberStatus
	waitFor(t, "a new leader", 10*time.Second, func() bool {
		i, ok := leaderOf(c.Members())
		if ok {
			newLeader = c.Members()[i]
		}
		return ok && newLeader.ID != old.ID
	})
	if newLeader.RaftTerm <= old.RaftTerm {
		t.Errorf("new leader's term %d is not above the old leader's %d", newLeader.RaftTerm, old.RaftTerm)
	}

	for i := range DefaultMembers {
		if i == oldIdx {
			continue
		}
		for n := range 10 {
			if _, err := memberClient(t, c, i).Put(ctxT(t), fmt.Sprintf("/registry/test/%d-%d", i, n), "v"); err != nil {
				t.Fatalf("write through member %d with the leader down: %v", i, err)
			}
		}
	}

	if err := c.RestartMember(ctxT(t), oldIdx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted member to catch up", 10*time.Second, func() bool {
		ms := c.Members()
		for _, m := range ms {
			if !m.Running || m.AppliedIndex != ms[0].AppliedIndex {
				return false
			}
		}
		return true
	})
	resp, err := memberClient(t, c, oldIdx).Get(ctxT(t), "/registry/test/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 2*10 {
		t.Errorf("restarted member holds %d keys, want the 20 written while it was down", resp.Count)
	}
}

// TestAMemberBehindTheKeptLogCatchesUpFromASnapshot stops a follower for
// more writes than the members keep Raft entries of (catchUpEntries): on
// its restart the leader has compacted them away and sends its database
// instead, as to a member that was down for long on a real cluster.
func TestAMemberBehindTheKeptLogCatchesUpFromASnapshot(t *testing.T) {
	c := startCluster(t, Options{})
	var leader int
	waitFor(t, "a leader", 10*time.Second, func() bool {
		var ok bool
		leader, ok = leaderOf(c.Members())
		return ok
	})
	follower := (leader + 1) % DefaultMembers
	received := snapshotsReceived(t, c, leader)
	if err := c.StopMember(follower); err != nil {
		t.Fatal(err)
	}
	const writes = 2*catchUpEntries + 100
	cli := memberClient(t, c, leader)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for n := w; n < writes; n += 16 {
				if _, err := cli.Put(ctxT(t), fmt.Sprintf("/registry/test/%05d", n), "v"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("write with a follower down: %v", err)
	}
	if err := c.RestartMember(ctxT(t), follower); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted member to catch up", time.Minute, func() bool {
		ms := c.Members()
		return ms[follower].Running && ms[follower].AppliedIndex >= ms[leader].AppliedIndex
	})
	resp, err := memberClient(t, c, follower).Get(ctxT(t), "/registry/test/", clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != writes {
		t.Errorf("the restarted member holds %d keys, want the %d written while it was down", resp.Count, writes)
	}
	if got := snapshotsReceived(t, c, leader); got <= received {
		t.Errorf("snapshots received: %d before the stop, %d after the restart; want one more: the leader kept only %d entries", received, got, catchUpEntries)
	}
}

// snapshotsReceived sums etcd's etcd_network_snapshot_receive_success
// counters, read from member i's /metrics (the members share this process's
// registry, so one member's page counts them all).
func snapshotsReceived(t *testing.T, c *Cluster, i int) int {
	t.Helper()
	tc, err := c.TLS().ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.member(i)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(m.httpURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "etcd_network_snapshot_receive_success{") {
			f := strings.Fields(l)
			n, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", l, err)
			}
			sum += int(n)
		}
	}
	return sum
}

func TestDataDirReopensAtSameRevision(t *testing.T) {
	dir := t.TempDir()
	c := startCluster(t, Options{DataDir: dir})
	cli := memberClient(t, c, 1)
	put, err := cli.Put(ctxT(t), "/registry/test/kept", "yes")
	if err != nil {
		t.Fatal(err)
	}
	cli.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, layoutFile)); err != nil {
		t.Fatalf("data dir lost after close: %v", err)
	}

	c = startCluster(t, Options{DataDir: dir})
	resp, err := memberClient(t, c, 2).Get(ctxT(t), "/registry/test/kept")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Revision != put.Header.Revision || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "yes" {
		t.Errorf("reopened cluster at revision %d with %v, want revision %d with the value written", resp.Header.Revision, resp.Kvs, put.Header.Revision)
	}

	c.Close()
	if _, err := Start(ctxT(t), Options{DataDir: dir, Members: 5}); err == nil {
		t.Error("reopening a 3-member data dir as 5 members succeeded, want an error")
	}
}

func TestTemporaryDataDirRemovedOnClose(t *testing.T) {
	c := startCluster(t, Options{Members: 1})
	dir := c.DataDir()
	if _, err := os.Stat(filepath.Join(dir, logFileName)); err != nil {
		t.Fatalf("etcd log not in data dir: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary data dir %s left after close (stat: %v)", dir, err)
	}
}

func TestTwoClustersInOneProcess(t *testing.T) {
	a := startCluster(t, Options{Members: 1})
	b := startCluster(t, Options{Members: 1})
	if a.Endpoints()[0] == b.Endpoints()[0] {
		t.Fatalf("both clusters serve at %s", a.Endpoints()[0])
	}
	if _, err := memberClient(t, a, 0).Put(ctxT(t), "k", "a"); err != nil {
		t.Fatal(err)
	}
	resp, err := memberClient(t, b, 0).Get(ctxT(t), "k")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Error("a write to one cluster shows in the other")
	}
}

func TestClientsAndPeersNeedTheClientCertificate(t *testing.T) {
	c := startCluster(t, Options{Members: 3})
	files := c.TLS()
	for _, f := range []string{files.CA, files.Cert, files.Key, files.ServerKey, filepath.Join(c.DataDir(), "tls", "ca.key")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("TLS file %s: %v, want mode 0600", f, err)
		}
	}
	cli := memberClient(t, c, 0)
	members, err := cli.MemberList(ctxT(t))
	if err != nil {
		t.Fatalf("client with the CA and client certificate: %v", err)
	}
	for _, m := range members.Members {
		for _, u := range append(m.PeerURLs, m.ClientURLs...) {
			if !strings.HasPrefix(u, "https://") {
				t.Errorf("member %s serves %s, want https only", m.Name, u)
			}
		}
	}

	caOnly, err := (&transport.TLSInfo{TrustedCAFile: files.CA}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*tls.Config{"no CA": nil, "the CA only": caOnly} {
		anon, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), TLS: cfg, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if _, err := anon.Put(ctx, "anonymous", "1"); err == nil {
			t.Errorf("a client with %s wrote to the cluster", name)
		}
		cancel()
		anon.Close()
	}
	if resp, err := cli.Get(ctxT(t), "anonymous"); err != nil || resp.Count != 0 {
		t.Errorf("after the refused writes: %v, %v; want no key", resp, err)
	}
}

func TestReopenOnATakenPeerPortSaysTheAddressIsInUse(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(ctxT(t), Options{Members: 1, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	l, err := readLayout(dir)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Peer URLs are the members' identity in the cluster, so a reopen
	// keeps them (readLayout) and cannot move to another port.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", l.Members[0].PeerPort))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err = Start(ctxT(t), Options{Members: 1, DataDir: dir})
	if err == nil {
		c.Close()
		t.Fatal("reopened on a taken peer port")
	}
	if !isAddrInUse(err) {
		t.Errorf("error %v, want one that says the address is in use", err)
	}
}

func TestReopenOfAClusterMadeWithoutTLSSaysToUseANewDataDir(t *testing.T) {
	dir := t.TempDir()
	old := `{"token": "etcdscope-0", "members": [{"name": "etcd-0", "peerPort": 1, "clientPort": 2}]}`
	if err := os.WriteFile(filepath.Join(dir, layoutFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctxT(t), Options{DataDir: dir})
	if err == nil {
		c.Close()
	}
	want := "data dir " + dir + " holds a cluster an older etcdscope made without TLS: use a new --data-dir"
	if err == nil || err.Error() != want {
		t.Errorf("Start: %v, want %q", err, want)
	}
}
