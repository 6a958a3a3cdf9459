package fill

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestFillKineWritesThePlanItsHistoryAndDeletionsThroughARealKine(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Params: etcdtest.K3sSQLiteParams})
	cli := k.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := NewPlan(2000)
	last, err := FillKine(ctx, cli, p)
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for range p.Expired() {
		expired++
	}
	updates := p.LeaseRenewals*min(p.Nodes, p.Counts["leases"]) + p.PodUpdates
	if want := int64(p.Keys + updates + expired); last < want {
		t.Errorf("last revision %d, want at least one per write, %d", last, want)
	}

	keys, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, kv := range keys.Kvs {
		// kine writes /registry/health itself, for its health check.
		if string(kv.Key) != "/registry/health" {
			live++
		}
	}
	if want := p.Keys - expired; live != want {
		t.Errorf("%d keys below /registry/, want the plan's %d less %d expired events = %d", live, p.Keys, expired, want)
	}
	for key := range p.Expired() {
		got, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Kvs) != 0 {
			t.Errorf("expired event %s is still there", key)
		}
		break
	}

	// A node lease: renewed LeaseRenewals times after its create, and its
	// first revision still readable, as kine keeps every row until compacted.
	key, _ := etcdviewtest.Key(lease("kube-node-lease", nodeName(0), 0))
	now, err := cli.Get(ctx, key)
	if err != nil || len(now.Kvs) != 1 {
		t.Fatalf("get %s: %v, %d kvs", key, err, len(now.Kvs))
	}
	versions := 1
	for rev := now.Kvs[0].ModRevision; rev > now.Kvs[0].CreateRevision; versions++ {
		old, err := cli.Get(ctx, key, clientv3.WithRev(rev-1))
		if err != nil || len(old.Kvs) != 1 {
			t.Fatalf("get %s at revision %d: %v", key, rev-1, err)
		}
		rev = old.Kvs[0].ModRevision
	}
	if want := 1 + p.LeaseRenewals; versions != want {
		t.Errorf("%s has %d revisions, want its create and %d renewals", key, versions, p.LeaseRenewals)
	}

	// k3s' journal: a SQLite header says WAL with 2 in bytes 18 and 19.
	header := make([]byte, 20)
	f, err := os.Open(k.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, header); err != nil || header[18] != 2 || header[19] != 2 {
		t.Errorf("%s is not in WAL mode, as k3s' state.db is: header %x, %v", k.DB, header, err)
	}
}
