package main

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// historyLease is a node Lease of the fill: bench/fill renews every node's
// Lease LeaseRenewals (10) times after the fill, so it has 11 versions.
const historyLease = "/registry/leases/kube-node-lease/node-0000"

// historyVersions is how many versions the second key is given: the
// goal's bound.
const historyVersions = 100

// historyGoal is the issue's: a key of up to 100 versions, whatever the
// size of the store.
const historyGoal = 0.100

// historyFigures time `history` of the fill's Lease and of a key the run
// gives 100 versions, each beside `etcdctl get` of the key (one read, the
// floor of any command that reads it) and `history --all-incarnations`:
// the replay of etcd's whole history every `history` made before, which
// `etcdctl watch --rev 1 KEY` would make too but never ends by itself.
func historyFigures(e env) []row {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return []row{failed("`history` of a key", "≤ 100 ms", err)}
	}
	defer cli.Close()
	ctx := context.Background()
	rows := []row{historyFigure(e, cli, historyLease, "a node Lease of the fill")}
	key := fmt.Sprintf("%s-bench-history-%d", historyLease, time.Now().UnixNano())
	if err := writeVersions(ctx, cli, key, historyVersions); err != nil {
		return append(rows, failed(fmt.Sprintf("`history` of a key with %d versions", historyVersions), "≤ 100 ms", err))
	}
	// The figures after this one measure the fill's keys alone.
	defer cli.Delete(ctx, key)
	return append(rows, historyFigure(e, cli, key, "a key written by the run"))
}

// writeVersions puts the fill's Lease value at key n times.
func writeVersions(ctx context.Context, cli *clientv3.Client, key string, n int) error {
	lease, err := cli.Get(ctx, historyLease)
	if err != nil {
		return err
	}
	if len(lease.Kvs) == 0 {
		return fmt.Errorf("the fill has no %s", historyLease)
	}
	for range n {
		if _, err := cli.Put(ctx, key, string(lease.Kvs[0].Value)); err != nil {
			return err
		}
	}
	return nil
}

// historyFigure times `history KEY`, what is named of it.
func historyFigure(e env, cli *clientv3.Client, key, what string) row {
	resp, err := cli.Get(context.Background(), key)
	if err == nil && len(resp.Kvs) == 0 {
		err = fmt.Errorf("no %s", key)
	}
	fig := fmt.Sprintf("`history` of %s", what)
	const goal = "≤ 100 ms"
	if err != nil {
		return failed(fig, goal, err)
	}
	fig = fmt.Sprintf("`history` of %s, %d versions, at revision %d", what, resp.Kvs[0].Version, resp.Header.Revision)
	med, err := hyperfine(e.runs, e.tmp,
		e.etcdscopeCmd("history", key),
		e.etcdctlCmd("get", key),
		e.etcdscopeCmd("history", key, "--all-incarnations"))
	if err != nil {
		return failed(fig, goal, err)
	}
	return row{
		figure: fig, ours: ms(med[0]),
		theirs: fmt.Sprintf("%s etcdctl get; %s the replay every history made before (now `--all-incarnations`)", ms(med[1]), ms(med[2])),
		ratio:  fmt.Sprintf("%.2f", med[0]/med[1]), goal: goal, met: med[0] <= historyGoal, measured: true,
	}
}
