package embedded

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/etcdscope/etcdscope/embedded/datadir"
	"go.etcd.io/etcd/server/v3/embed"
)

// MemberStatus is one member as the cluster pane and `etcdscope status` show
// it. The Raft figures are those etcd's Status RPC reports (RaftIndex is the
// committed index).
type MemberStatus struct {
	Name      string
	ID        uint64
	ClientURL string
	Running   bool
	Leader    bool
	// LeaderID is the leader this member follows, 0 when it knows none.
	LeaderID     uint64
	RaftTerm     uint64
	RaftIndex    uint64
	AppliedIndex uint64
	DBSize       int64
	DBSizeInUse  int64
}

type member struct {
	layout  memberLayout
	cluster *layout
	// state is etcd's --initial-cluster-state: "new" on the first start,
	// "existing" once the member has data.
	state string

	mu   sync.Mutex
	etcd *embed.Etcd
	id   uint64
}

func (m *member) clientURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", m.layout.ClientPort)
}

func (m *member) httpURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", m.layout.HTTPPort)
}

// memberConfig is the embed configuration of one member: loopback only, its
// own directory under the cluster's, logs to the cluster's logger.
func (c *Cluster) memberConfig(m *member) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = m.layout.Name
	cfg.Dir = filepath.Join(c.dir, m.layout.Name)
	peer, _ := url.Parse(m.layout.peerURL())
	client, _ := url.Parse(m.clientURL())
	http, _ := url.Parse(m.httpURL())
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenClientHttpUrls = []url.URL{*http}
	cfg.InitialCluster = m.cluster.initialCluster()
	cfg.InitialClusterToken = m.cluster.Token
	cfg.ClusterState = m.state
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.logger.Named(m.layout.Name))
	cfg.ClientTLSInfo = c.tls.serverInfo()
	cfg.PeerTLSInfo = c.tls.serverInfo()
	cfg.SnapshotCatchUpEntries = catchUpEntries
	return cfg
}

// catchUpEntries is each member's --snapshot-catchup-entries: the Raft
// entries it keeps in memory past its last snapshot, for a follower that
// fell behind to catch up from. etcd 3.7 snapshots in memory every 100
// applied entries (memorySnapshotCount) and then compacts its log down to
// this many; its default, 5000, is sized for followers on other machines.
// Here they share the process, and the demo's 5000 entries (a Pod's are
// 2-4 KiB) were about 25 MB of heap across three members, reached in about
// six minutes of the calm demo, a minute of the busy one. A follower further
// behind, as one stopped with `k` and restarted, gets a snapshot of the
// leader's database, as on a real cluster.
const catchUpEntries = 1000

// startMember starts m in its own dir, which is checked first as the data
// dir is: etcd keeps the member's keys and WAL there.
func (c *Cluster) startMember(m *member) error {
	cfg := c.memberConfig(m)
	if err := datadir.Ensure(cfg.Dir); err != nil {
		return err
	}
	return m.start(cfg)
}

func (m *member) start(cfg *embed.Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd != nil {
		return fmt.Errorf("member %s is already running", m.layout.Name)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start member %s: %w", m.layout.Name, err)
	}
	m.etcd = e
	m.id = uint64(e.Server.MemberID())
	return nil
}

func (m *member) waitReady(ctx context.Context) error {
	m.mu.Lock()
	e := m.etcd
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("member %s is stopped", m.layout.Name)
	}
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("member %s failed: %w", m.layout.Name, err)
	case <-ctx.Done():
		return fmt.Errorf("member %s not ready: %w", m.layout.Name, ctx.Err())
	}
}

// stop stops the member; hard skips the leadership hand-over a leader
// makes on a graceful stop, as a crash or a kill does.
func (m *member) stop(hard bool) error {
	m.mu.Lock()
	e := m.etcd
	m.etcd = nil
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("member %s is already stopped", m.layout.Name)
	}
	if hard {
		e.Server.HardStop()
	}
	e.Close()
	return nil
}

func (m *member) status() MemberStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := MemberStatus{
		Name:      m.layout.Name,
		ID:        m.id,
		ClientURL: m.clientURL(),
	}
	if m.etcd == nil {
		return s
	}
	srv := m.etcd.Server
	s.Running = true
	s.LeaderID = srv.Lead()
	s.Leader = s.LeaderID != 0 && s.LeaderID == s.ID
	s.RaftTerm = srv.Term()
	s.RaftIndex = srv.CommittedIndex()
	s.AppliedIndex = srv.AppliedIndex()
	s.DBSize = srv.Backend().Size()
	s.DBSizeInUse = srv.Backend().SizeInUse()
	return s
}
