package etcdview

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
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
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		rev := put(t, cli, "/registry/x", "1")
		put(t, cli, compactRevKey, "1")
		cl, err := NewLive(cli, 0).Status(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Members) != 1 || !cl.Members[0].Leader || cl.Members[0].Err != nil {
			t.Fatalf("members %+v, want one leader", cl.Members)
		}
		// kine keeps kube-apiserver's compact_rev_key apart from its own
		// compaction, which it has not made.
		wantCompact := map[bool]int64{false: 1, true: 0}[cl.Kine]
		if cl.Revision <= rev || cl.CompactRevision != wantCompact || cl.Kine != onKine(t, cli) {
			t.Errorf("revision %d, compaction %d, kine %v; want past %d, %d", cl.Revision, cl.CompactRevision, cl.Kine, rev, wantCompact)
		}
	})
}

// answersNothing is an etcd API that answers Status as no etcd does: with
// an empty header, or with nothing and no error.
type answersNothing struct {
	Client
	endpoint string
	empty    bool
}

func (a answersNothing) Endpoints() []string { return []string{a.endpoint} }

func (a answersNothing) Status(context.Context, string) (*clientv3.StatusResponse, error) {
	if a.empty {
		return &clientv3.StatusResponse{Header: &etcdserverpb.ResponseHeader{}}, nil
	}
	return nil, nil
}

func (a answersNothing) MemberList(context.Context, ...clientv3.OpOption) (*clientv3.MemberListResponse, error) {
	return nil, errors.New("unimplemented")
}

func TestStatusOfAServerThatAnswersNoRevisionSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ep := "http://" + ln.Addr().String()
	for _, tc := range []struct {
		empty bool
		want  string
	}{
		{true, "no etcd member answered with a revision: " + ep + " answered its status with revision 0 (an etcd API that is not etcd, such as kine?)"},
		{false, "no etcd member answered: " + ep + " answered its status without a header"},
	} {
		_, err := NewLive(answersNothing{endpoint: ep, empty: tc.empty}, 0).Status(testCtx(t))
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "%!") {
			t.Errorf("status of a server answering with an empty header %v: %v, want %q", tc.empty, err, tc.want)
		}
	}
}
