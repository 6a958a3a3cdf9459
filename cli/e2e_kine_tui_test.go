package cli

import (
	"fmt"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// TestTUIOnKine drives the real binary on kine where k3s serves it, on a
// unix socket: an object opened, its update and deletion in the tail, its
// history with the diff, and the cluster screen saying what kine is.
func TestTUIOnKine(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Socket: true})
	cli := k.Client(t)
	st, err := cli.Status(t.Context(), k.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rev1 := etcdviewtest.Put(t, cli, webPod("nginx:1.27", corev1.PodPending))
	s := startTUI(t, "--endpoints", k.Endpoint)
	s.waitText("1/1 members up")

	s.command("key /registry/pods/default/web-0")
	s.waitText(fmt.Sprintf("/registry/pods/default/web-0  rev %d", rev1), "phase: Pending")

	s.updateInTailThenHistory(cli, rev1)

	s.keys("2")
	if err := etcdtest.Delete(t.Context(), cli, "/registry/pods/default/web-0"); err != nil {
		t.Fatal(err)
	}
	s.waitText("DELETED", "default/web-0")

	s.keys("4")
	screen := s.waitText("kine (emulating etcd "+st.Version+")", "kine ", "1/1 members up")
	t.Logf("screen 4 on kine:\n%s", screen)
}

// updateInTailThenHistory updates web-0, written at rev1, from outside
// while the tail shows: a MODIFIED row arrives; h on it opens its history,
// both revisions and the diff. It returns the update's revision.
func (s *tuiSession) updateInTailThenHistory(cli *clientv3.Client, rev1 int64) int64 {
	s.t.Helper()
	s.keys("2")
	s.waitText("tail /registry/")
	rev2 := etcdviewtest.Put(s.t, cli, webPod("nginx:1.28", corev1.PodRunning))
	s.waitText(fmt.Sprint(rev2), "MODIFIED", "default/web-0")
	s.keys("h")
	s.waitText("history /registry/pods/default/web-0", fmt.Sprint(rev1), fmt.Sprint(rev2),
		fmt.Sprintf("diff revision %d → %d", rev1, rev2), "+  - image: nginx:1.28")
	return rev2
}
