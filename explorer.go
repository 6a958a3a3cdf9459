package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui"
	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// runExplorer opens the source the flags name and shows it in the TUI.
func runExplorer(ctx context.Context, conn *connFlags, members int) error {
	kind, err := conn.kind()
	if err != nil {
		return err
	}
	switch kind {
	case fileSource:
		desc, err := describeDataFile(conn.db)
		if err != nil {
			return err
		}
		return ui.RunPlaceholder(ctx, desc, func(context.Context) ([]string, error) { return nil, nil })
	case liveSource:
		cfg, err := conn.etcdConfig()
		if err != nil {
			return err
		}
		cli, err := etcdview.Dial(ctx, cfg)
		if err != nil {
			return err
		}
		defer cli.Close()
		return ui.RunPlaceholder(ctx, "etcd at "+strings.Join(cfg.Endpoints, ","), memberLines(cli))
	}
	c, err := embedded.Start(ctx, embedded.Options{Members: members, DataDir: conn.dataDir})
	if err != nil {
		return err
	}
	defer c.Close()
	cfg, err := c.ClientConfig()
	if err != nil {
		return err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer cli.Close()
	return ui.RunPlaceholder(ctx, fmt.Sprintf("bundled %d-member cluster in %s", len(c.Members()), c.DataDir()), memberLines(cli))
}

// memberLines reports each member's status as the placeholder screen shows it.
func memberLines(cli *clientv3.Client) ui.StatusFunc {
	return func(ctx context.Context) ([]string, error) {
		var lines []string
		for _, ep := range cli.Endpoints() {
			st, err := cli.Status(ctx, ep)
			if err != nil {
				lines = append(lines, fmt.Sprintf("%-28s unreachable: %v", ep, err))
				continue
			}
			role := "follower"
			if st.Leader == st.Header.MemberId {
				role = "leader ★"
			}
			lines = append(lines, fmt.Sprintf("%-28s %-9s term %-4d index %-8d applied %-8d db %s",
				ep, role, st.RaftTerm, st.RaftIndex, st.RaftAppliedIndex, humanize.IBytes(uint64(st.DbSize))))
		}
		return lines, nil
	}
}

// describeDataFile checks that path is an etcd v3 data file, opened
// read-only so that a live member's file is never changed.
func describeDataFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("open etcd data file: %w", err)
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return "", fmt.Errorf("open etcd data file %s: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("key")) == nil {
			return fmt.Errorf("%s is a bbolt file without etcd's \"key\" bucket: not an etcd data file", path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("offline data file %s (%s)", path, humanize.IBytes(uint64(fi.Size()))), nil
}
