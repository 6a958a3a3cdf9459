package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// checkFigures time `check members` on the fill restored into three
// members (etcdutl snapshot restore of one snapshot, as an operator builds
// a cluster from a backup): healthy, beside one `etcdctl endpoint hashkv`
// per member, all at once (check asks every member for its hash in
// parallel; here the three members share the machine's cores, so one
// hashkv alone is no yardstick of three), then with one value altered in one
// member's file, beside the three `etcdctl get --prefix --rev R` dumps a
// person runs today, one member after the other.
func checkFigures(e env) []row {
	const healthyFig, alteredFig, rssFig = "`check members`, 3 healthy members", "`check members`, one member's value altered", "peak RSS of `check members`, one member altered"
	fail := func(err error) []row {
		return []row{failed(healthyFig, "ratio ≤ 1.25", err), failed(alteredFig, "ratio ≤ 0.5", err), failed(rssFig, "≤ 200 MB", err)}
	}
	if *etcdutl == "" {
		return fail(errors.New("no --etcdutl given"))
	}
	dir := filepath.Join(e.tmp, "check")
	defer os.RemoveAll(dir)
	db := filepath.Join(e.tmp, "check-snapshot.db")
	defer os.Remove(db)
	save := e.etcdctlCmd("snapshot", "save", db)
	if out, err := exec.Command(save[0], save[1:]...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("etcdctl snapshot save: %v: %s", err, out))
	}
	c, err := etcdtest.LaunchCluster(e.etcdBin, dir, 3, func(m etcdtest.MemberSpec) error {
		out, err := exec.Command(*etcdutl, "snapshot", "restore", db, "--name", m.Name, "--data-dir", m.DataDir,
			"--initial-cluster", m.InitialCluster, "--initial-advertise-peer-urls", m.PeerURL).CombinedOutput()
		if err != nil {
			return fmt.Errorf("etcdutl snapshot restore: %v: %s", err, out)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	defer c.Stop()
	eps := c.Endpoints()
	check := []string{e.etcdscope, "check", "members", "--endpoints", strings.Join(eps, ","), checkTimeout}
	rev, key, err := revisionAndKey(eps)
	if err != nil {
		return fail(err)
	}
	var hashes []string
	for _, ep := range eps {
		hashes = append(hashes, shellJoin([]string{e.etcdctl, "--endpoints", ep, checkTimeout, "endpoint", "hashkv",
			fmt.Sprintf("--rev=%d", rev)})+" >/dev/null &")
	}
	hashkv := []string{"sh", "-c", strings.Join(hashes, " ") + " wait"}
	med, err := hyperfine(e.runs, e.tmp, check, hashkv)
	var healthy row
	if err != nil {
		healthy = failed(healthyFig, "ratio ≤ 1.25", err)
	} else {
		healthy = ratioRow(healthyFig, med[0], med[1], 1.25, "3 × `etcdctl endpoint hashkv` at once")
	}

	bad := c.Members[2]
	bad.Stop()
	if err := bad.AlterValue(key, []byte("altered by a bad disk")); err != nil {
		return []row{healthy, failed(alteredFig, "ratio ≤ 0.5", err), failed(rssFig, "≤ 200 MB", err)}
	}
	if err := bad.Start(); err != nil {
		return []row{healthy, failed(alteredFig, "ratio ≤ 0.5", err), failed(rssFig, "≤ 200 MB", err)}
	}
	// check exits 1 when the members disagree, which is what it must find.
	altered := []string{"sh", "-c", shellJoin(check) + " >/dev/null; test $? -eq 1"}
	var dumps []string
	for _, ep := range eps {
		dumps = append(dumps, shellJoin([]string{e.etcdctl, "--endpoints", ep, checkTimeout, "get", "", "--prefix",
			fmt.Sprintf("--rev=%d", rev), "--consistency=s"})+" >/dev/null")
	}
	med, err = hyperfine(e.runs, e.tmp, altered, []string{"sh", "-c", strings.Join(dumps, " && ")})
	if err != nil {
		return []row{healthy, failed(alteredFig, "ratio ≤ 0.5", err), checkRSS(check, rssFig)}
	}
	rows := []row{healthy, ratioRow(alteredFig+fmt.Sprintf(", %dk keys", e.keys/1000), med[0], med[1], 0.5, "3 × `etcdctl get --prefix --rev R`")}
	return append(rows, checkRSS(check, rssFig))
}

// checkTimeout is every command's --command-timeout here: a dump of 1M
// keys on a machine that others load takes over a minute, and etcdctl
// fails at its timeout.
const checkTimeout = "--command-timeout=10m"

// revisionAndKey is the cluster's revision and a key of the fill's to
// alter.
func revisionAndKey(eps []string) (int64, string, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := cli.Get(ctx, "/registry/configmaps/", clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if err != nil {
		return 0, "", err
	}
	if len(resp.Kvs) == 0 {
		return 0, "", errors.New("the fill holds no ConfigMap")
	}
	return resp.Header.Revision, string(resp.Kvs[0].Key), nil
}

// checkRSS runs check once and reads its peak RSS.
func checkRSS(check []string, fig string) row {
	rss, err := runMeasured(exec.Command(check[0], check[1:]...))
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return failed(fig, "≤ 200 MB", err)
	}
	mb := rss / (1 << 20)
	return row{figure: fig, ours: fmt.Sprintf("%.0f MB", mb), goal: "≤ 200 MB", met: mb <= 200, measured: true}
}
