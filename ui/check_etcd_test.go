package ui

import (
	"context"
	"strconv"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// TestCheckFindsTheMemberWhoseDiskChanged runs c on screen 4 over a real
// 3-member etcd cluster, one member's bbolt file rewritten while it was
// stopped as a bad disk would: the report names the key with each member's
// version, and enter shows the altered member's value as a diff against
// the other two's.
func TestCheckFindsTheMemberWhoseDiskChanged(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3, etcdtest.ClusterOptions{})
	cli := c.Client(t)
	good := etcdviewtest.ConfigMap("motd")
	good.Data = map[string]string{"greeting": "hello"}
	rev := etcdviewtest.Put(t, cli, good)
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("other"))
	bad := good.DeepCopy()
	bad.Data["greeting"] = "hellp"
	val, err := etcdviewtest.Encode(bad)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Members[2]
	m.Stop()
	if err := m.AlterValue("/registry/configmaps/default/motd", val); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	live, err := etcdview.Connect(context.Background(), etcdview.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })

	tm := startOn(t, 160, 45, Options{Source: live, Description: "3 members, one altered"})
	wait := func(want ...string) { t.Helper(); uitest.WaitScreen(t, tm, time.Minute, want...) }
	wait("3/3 members up")
	typeText(tm, "4c")
	wait("the members differ at revision", "1 key (range reads", "member-0", "member-2",
		"/registry/configmaps/default/motd", "mod "+strconv.FormatInt(rev, 10)+" ver 1")
	press(tm, tea.KeyEnter)
	wait("[1 browse]", "/registry/configmaps/default/motd on each member at revision",
		"member-2 against member-0, member-1", "-  greeting: hello", "+  greeting: hellp", "the value of member-0, member-1")
	press(tm, tea.KeyEsc)
	wait("/registry/configmaps/default/motd  rev")
	finalView(t, tm)
}
