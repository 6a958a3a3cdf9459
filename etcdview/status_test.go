package etcdview

import (
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestStatusReportsUnreachableMemberWithoutFailing(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 3)
	put(t, cli, "/registry/x", "1")
	stopped := 0
	if c.Members()[0].Leader {
		stopped = 1
	}
	if err := c.StopMember(stopped); err != nil {
		t.Fatal(err)
	}
	cl, err := NewLive(cli, 0).Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Members) != 3 {
		t.Fatalf("%d members, want 3: %+v", len(cl.Members), cl.Members)
	}
	var leaders, unreachable int
	for _, m := range cl.Members {
		if m.Leader {
			leaders++
		}
		if m.Err != nil {
			unreachable++
			if m.Name != c.Members()[stopped].Name {
				t.Errorf("unreachable member %q, want %q", m.Name, c.Members()[stopped].Name)
			}
			continue
		}
		if m.Name == "" || m.Version == "" || m.DBSize == 0 || m.RaftTerm == 0 || m.RaftIndex == 0 || m.Revision < 2 {
			t.Errorf("member reported without its figures: %+v", m)
		}
	}
	if leaders != 1 || unreachable != 1 {
		t.Errorf("%d leaders and %d unreachable members, want 1 and 1", leaders, unreachable)
	}
}

func TestStatusOfEachEtcd(t *testing.T) {
	eachEtcd(t, func(t *testing.T, cli *clientv3.Client) {
		rev := put(t, cli, "/registry/x", "1")
		put(t, cli, compactRevKey, "1")
		cl, err := NewLive(cli, 0).Status(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Members) != 1 || !cl.Members[0].Leader || cl.Members[0].Err != nil {
			t.Fatalf("members %+v, want one leader", cl.Members)
		}
		if cl.Revision <= rev || cl.CompactRevision != 1 {
			t.Errorf("revision %d and compaction %d, want past %d and 1 from %s", cl.Revision, cl.CompactRevision, rev, compactRevKey)
		}
	})
}
