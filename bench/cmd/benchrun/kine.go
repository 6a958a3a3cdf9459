package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/bench/fill"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// kineKeys is the size of the kine group's cluster: k3s' SQLite is for
// small clusters (k3s #10619's 20 GB file held 8.7M rows of Leases, most
// of them history), and kine writes about 2k objects a second.
var kineKeys = flag.Int("kine-keys", 100_000, "objects of the kine group's state.db (10,000 with --quick)")

// kineLeaseRenewals is the kine fill's history of node Leases: five
// minutes of renewals, one every 10 s, what a k3s datastore holds between
// two of kube-apiserver's compactions (--etcd-compaction-interval, 5m).
const kineLeaseRenewals = 30

// kineFillVersion names the kine fill's output beside fillVersion, which
// names the objects: bump it when FillKine writes another history.
const kineFillVersion = "1"

// sqlite3Query is what k3s users run by hand today to see what fills
// their datastore: every row kine holds, history included.
const sqlite3Query = "select name, length(value) from kine"

// kineFigures measure the kine group on a copy of the kept state.db: `ls
// -l` and `du` read from the file with --db beside Debian's sqlite3
// reading every row of it, then `ls` through a kine serving the copy
// beside etcdctl listing every key through the same kine. A figure whose
// command fails (an etcdscope that does not read kine's file) is not
// measured and says why; the others are.
func kineFigures(e env, keys int, logf func(string, ...any)) []row {
	const fig = "kine figures"
	bin, kept, err := keptKine(e.repo, keys, logf)
	if err != nil {
		return []row{failed(fig, "", err)}
	}
	work, err := os.MkdirTemp(cacheDir(), "kine-run-")
	if err != nil {
		return []row{failed(fig, "", err)}
	}
	defer os.RemoveAll(work)
	// kine vacuums the file when it starts and writes to it after:
	// served from a copy, the kept fill stays the one measured next time.
	if err := copyDB(kept, work); err != nil {
		return []row{failed(fig, "", err)}
	}
	db := filepath.Join(work, "state.db")
	fi, err := os.Stat(db)
	if err != nil {
		return []row{failed(fig, "", err)}
	}
	on := fmt.Sprintf("on a %d MB state.db of %dk objects, kine %s", fi.Size()>>20, keys/1000, kineBuildVersion(bin))
	logf("kine figures %s (hyperfine, %d runs each)", on, e.runs)
	rows := kineFileFigures(e, db, []kineFileCmd{
		{fmt.Sprintf("`ls -l /registry --db` %s", on), []string{"ls", "-l", "/registry"}},
		{"`du /registry --db` on that state.db", []string{"du", "/registry"}},
	})
	return append(rows, kineLiveFigure(e, bin, work, keys))
}

// kineFileCmd is a figure of the kine group on the file: etcdscope --db
// with args.
type kineFileCmd struct {
	figure string
	args   []string
}

// kineFileFigures time each command reading db beside sqlite3's query of
// every row, all in one hyperfine run: each at most twice sqlite3's time,
// in at most 200 MB of RSS. sqlite3 is timed even when no etcdscope
// command reads the file, so that the baseline is in the table.
func kineFileFigures(e env, db string, figs []kineFileCmd) []row {
	const goal = "ratio ≤ 2, peak RSS ≤ 200 MB"
	sqlite3 := []string{"sqlite3", "-readonly", db, sqlite3Query}
	var cmds [][]string
	refused := make([]error, len(figs))
	for i, f := range figs {
		cmd := append([]string{e.etcdscope, "--db", db}, f.args...)
		if refused[i] = probe(cmd); refused[i] == nil {
			cmds = append(cmds, cmd)
		}
	}
	med, err := hyperfine(e.runs, e.tmp, append(cmds, sqlite3)...)
	theirs := "sqlite3 -readonly '" + sqlite3Query + "'"
	rows := make([]row, len(figs))
	for i, f := range figs {
		switch {
		case err != nil:
			rows[i] = failed(f.figure, goal, err)
		case refused[i] != nil:
			rows[i] = failed(f.figure, goal, refused[i])
			rows[i].theirs = ms(med[len(med)-1]) + " " + theirs
		default:
			cmd := cmds[0]
			rows[i] = withPeakRSS(e, ratioRow(f.figure, med[0], med[len(med)-1], 2, theirs), cmd)
			cmds, med = cmds[1:], med[1:]
		}
	}
	return rows
}

// kineLiveFigure serves the copy in work with kine, as k3s does, and times
// `etcdscope ls /registry` through it beside etcdctl's listing of every key
// through the same kine: at most a fifth of its time.
func kineLiveFigure(e env, bin, work string, keys int) row {
	fig := fmt.Sprintf("one level of /registry through kine, %dk objects (`ls /registry`)", keys/1000)
	const goal = "ratio ≤ 0.2"
	k, err := etcdtest.LaunchKine(bin, etcdtest.KineOptions{Dir: work, Params: etcdtest.K3sSQLiteParams})
	if err != nil {
		return failed(fig, goal, err)
	}
	defer k.Stop()
	through := e
	through.endpoint = k.Endpoint
	ls := through.etcdscopeCmd("ls", "/registry")
	if err := probe(ls); err != nil {
		return failed(fig, goal, err)
	}
	med, err := hyperfine(e.runs, e.tmp, ls, through.etcdctlCmd("get", "/registry", "--prefix", "--keys-only"))
	if err != nil {
		return failed(fig, goal, err)
	}
	return ratioRow(fig, med[0], med[1], 0.2, "etcdctl --keys-only through kine")
}

// probe runs cmd once, its output discarded, and returns what it said on
// stderr when it fails: the reason a figure is not measured.
func probe(cmd []string) error {
	c := exec.Command(cmd[0], cmd[1:]...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%s: %s", filepath.Base(cmd[0]), msg)
		}
		return fmt.Errorf("%s: %w", filepath.Base(cmd[0]), err)
	}
	return nil
}

// keptKine is kine built from bench/kine and the directory of its kept
// fill of keys objects.
func keptKine(repo string, keys int, logf func(string, ...any)) (bin, dir string, err error) {
	if bin, err = etcdtest.Build(repo, "kine"); err != nil {
		return "", "", err
	}
	dir, err = kineData(bin, keys, logf)
	return bin, dir, err
}

// kineBuildVersion is the version in the name etcdtest.Build gives kine,
// "kine-0.17.5-<hash>".
func kineBuildVersion(bin string) string {
	return strings.SplitN(strings.TrimPrefix(filepath.Base(bin), "kine-"), "-", 2)[0]
}

// kineData is the directory of the kept kine fill of keys objects, filled
// through kine bin the first time: one per kine build, plan and history,
// complete once its "filled" marker is there.
func kineData(bin string, keys int, logf func(string, ...any)) (string, error) {
	dir := filepath.Join(cacheDir(), fmt.Sprintf("%s-%d-v%s.%s", filepath.Base(bin), keys, fillVersion, kineFillVersion))
	if marker, err := os.ReadFile(filepath.Join(dir, "filled")); err == nil {
		logf("reusing the kine fill in %s: %s", dir, bytes.TrimSpace(marker))
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	k, err := etcdtest.LaunchKine(bin, etcdtest.KineOptions{Dir: dir, Params: etcdtest.K3sSQLiteParams})
	if err != nil {
		return "", err
	}
	defer k.Stop()
	cli, err := clientv3.New(k.ClientConfig())
	if err != nil {
		return "", err
	}
	defer cli.Close()
	logf("filling %s through kine with %d objects and their history (paid once per machine)", dir, keys)
	start := time.Now()
	plan := fill.NewPlan(keys)
	plan.LeaseRenewals = kineLeaseRenewals
	rev, err := fill.FillKine(context.Background(), cli, plan)
	if err != nil {
		return "", fmt.Errorf("kine fill: %w", err)
	}
	took := time.Since(start)
	marker := fmt.Sprintf("%d objects, revision %d, written in %v (%.0f writes/s)", keys, rev, took.Round(time.Second), float64(rev)/took.Seconds())
	logf("filled: %s", marker)
	return dir, os.WriteFile(filepath.Join(dir, "filled"), []byte(marker+"\n"), 0o644)
}

// copyDB copies kine's SQLite file in dir, with the WAL beside it when
// kine left one, into work.
func copyDB(dir, work string) error {
	files, err := filepath.Glob(filepath.Join(dir, "state.db*"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no state.db in %s: %v", dir, err)
	}
	args := append([]string{"-a", "--reflink=auto"}, append(files, work)...)
	if out, err := exec.Command("cp", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the kine fill: %v: %s", err, out)
	}
	return nil
}
