package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
)

// TestExplorerRecordsWhatItWatchesThenReplaysIt: the explorer with
// --record writes every change it sees into the file while it runs, says
// so in its header, and the file opened with --db is a recording that the
// time line steps through and the tail replays.
func TestExplorerRecordsWhatItWatchesThenReplaysIt(t *testing.T) {
	c, endpoints, cli := startEtcd(t, 1)
	path := filepath.Join(t.TempDir(), "rec.db")
	rev1 := etcdviewtest.Put(t, cli, webPod("nginx:1.27", corev1.PodPending))
	s := startTUI(t, append([]string{"--endpoints", endpoints, "--record", path}, tlsFlags(c.TLS())...)...)
	s.waitText("1/1 members up", "record "+path)
	s.keys("2")
	rev2 := etcdviewtest.Put(t, cli, webPod("nginx:1.28", corev1.PodRunning))
	s.waitText(fmt.Sprint(rev2), "default/web-0")
	// The recorder commits what it read before the explorer ends.
	s.quit()
	if got := run(t, "get", "--db", path, "pods", "web-0", "-n", "default", "-o", "jsonpath={.spec.containers[0].image}"); got != "nginx:1.28" {
		t.Errorf("the recording holds web-0 with image %q, want nginx:1.28", got)
	}

	r := startTUI(t, "--db", path)
	// The header names a recording, with no member to be up or down.
	header := r.waitText("replay ", fmt.Sprintf("rev %d at", rev2), "recording "+path, "recording, offline")
	if strings.Contains(header, "members up") || strings.Contains(header, "kine") {
		t.Errorf("the header of a recording names members or kine:\n%s", header)
	}
	r.keys("[")
	screen := r.waitText(fmt.Sprintf("@rev %d", rev1), fmt.Sprintf("rev %d, before the first recorded time", rev1))
	r.keys("2", ">", ">", "Space")
	screen = r.waitText("end of the recording, at revision "+fmt.Sprint(rev2), "■ end")
	if !strings.Contains(screen, "MODIFIED") {
		t.Errorf("the replay shows no MODIFIED row of web-0:\n%s", screen)
	}
	t.Logf("the tail replaying the recording:\n%s", screen)
}

// --record writes a recording of a live source: a file is one already.
func TestRecordRefusesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.db")
	msg := runFails(t, "--db", "../testdata/kube-1.7/boltdb-db", "--record", path)
	if !strings.Contains(msg, "--record records a live etcd or kine") {
		t.Errorf("--db with --record: %q, want it refused", msg)
	}
}

// TestExplorerRecordsItsFirstClusterAfterASwitch: --record records the
// cluster the explorer opened first, whichever it shows: after :ctx second
// the header and the flash line say whose recording goes on, a write to
// the first cluster still reaches the file, and nothing of the second.
func TestExplorerRecordsItsFirstClusterAfterASwitch(t *testing.T) {
	first, second := etcdtest.Start(t, etcdtest.Options{}), etcdtest.Start(t, etcdtest.Options{})
	clitest.UserConfig(t, fmt.Sprintf("clusters:\n- name: first\n  endpoints: [%s]\n- name: second\n  endpoints: [%s]\n", first.Endpoint, second.Endpoint))
	etcdviewtest.Put(t, second.Client(t), etcdviewtest.ConfigMap("only-in-second"))
	// A short path: the header's line holds it whole.
	dir, err := os.MkdirTemp("", "rec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "rec.db")
	s := startTUI(t, "--cluster", "first", "--record", path)
	s.waitText("record "+path, "cluster first")
	s.command("ctx second")
	s.waitText("switched to second; record "+path+" goes on recording first", "record "+path+" of first")
	rev := etcdviewtest.Put(t, first.Client(t), webPod("nginx:1.29", corev1.PodRunning))
	waitFor(t, 60*time.Second, "the write to first recorded", func() bool { return recordedHead(path) >= rev })
	s.quit()
	if got := run(t, "get", "--db", path, "pods", "web-0", "-n", "default", "-o", "jsonpath={.spec.containers[0].image}"); got != "nginx:1.29" {
		t.Errorf("the recording holds web-0 with image %q, want first's nginx:1.29", got)
	}
	if got := run(t, "ls", "--db", path, "/registry/configmaps/default/"); strings.Contains(got, "only-in-second") {
		t.Errorf("the recording holds the second cluster's ConfigMap:\n%s", got)
	}
}

// TestARecordingOfARollingUpdateReplays: the explorer records the bundled
// control plane while the real kubectl restarts CoreDNS; opened with --db,
// the recording replays the rollout from the revision before it, at full
// speed, to its end: the tail holds the Deployment's changes and the new
// ReplicaSet the restart made, and every screen is as of the end.
func TestARecordingOfARollingUpdateReplays(t *testing.T) {
	k := newKubectl(t)
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "rollout.db")
	s := startTUI(t, "--data-dir", dir, "--demo-nodes", "1", "--record", path)
	// The header names the file; a long path may be cut at the screen's edge.
	waitLong(t, s, "3/3 members up", "control plane ready", "· record "+path[:min(len(path), 5)])
	k.kubeconfig = filepath.Join(dir, "kubeconfig")
	k.run(t, "wait", "--for=create", "--timeout=50s", "-n", "kube-system", "deployment/coredns")
	k.run(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=50s")
	before := k.run(t, "-n", "kube-system", "get", "deployment", "coredns", "-o", "jsonpath={.metadata.resourceVersion}")
	k.run(t, "-n", "kube-system", "rollout", "restart", "deployment", "coredns")
	k.run(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=50s")
	s.quit()

	r := startTUI(t, "--db", path)
	r.waitText("replay ")
	r.command("rev " + before)
	r.waitText("rev " + before + " at ")
	r.keys("2", ">", ">", "Space")
	r.waitText("■ end", "end of the recording, at revision")
	filtered := func(words string, row *regexp.Regexp) string {
		t.Helper()
		r.keys("/")
		r.tmux("send-keys", "-t", "tui", "-l", words)
		r.keys("Enter")
		return r.waitFor("a row of "+words, func(sc string) bool { return row.MatchString(sc) })
	}
	filtered("deployments coredns modified", regexp.MustCompile(`MODIFIED +deployments +kube-system/coredns `))
	screen := filtered("replicasets coredns added", regexp.MustCompile(`ADDED +replicasets +kube-system/coredns-\w+ `))
	t.Logf("the replay of the rollout, the new ReplicaSet's row:\n%s", screen)
}
