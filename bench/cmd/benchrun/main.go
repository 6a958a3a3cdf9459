// Command benchrun is bench/run: it starts etcd as a process on a cached fill of
// a large cluster, measures every figure of issue 8 side by side with what
// users would run instead, and prints one table.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/bench/fill"
	"google.golang.org/grpc/grpclog"
)

func main() {
	keys := flag.Int("keys", 1_000_000, "keys of the cluster to fill and measure")
	runs := flag.Int("runs", 5, "runs of each figure; the table shows medians")
	quick := flag.Bool("quick", false, "one short pass of each figure, for CI: checks the benchmark code works, judges no goal")
	tailFor := flag.Duration("tail", 30*time.Second, "how long the writer puts during the tail-lag and record figures")
	etcdArg := flag.String("etcd", "3.7", "etcd holding the fill: a release line (3.4 is Debian's /usr/bin/etcd; 3.5, 3.6 and 3.7 are built and cached, 3.7 from go.mod's etcd) or a binary")
	etcdctl := flag.String("etcdctl", "/usr/bin/etcdctl", "etcdctl to compare with (bench/run passes etcdctl 3.7.3, which works against every etcd)")
	etcdscope := flag.String("etcdscope", "", "etcdscope binary to measure (bench/run builds it)")
	fillOnly := flag.Bool("fill-only", false, "fill (or reuse) the data dir, then stop")
	only := flag.String("only", "", "measure only these groups of figures, comma-separated: cli, ls, history, du, tui, offline, check, changes, tail, record, go, kine")
	tuiEndpoint := flag.String("tui-child", "", "internal: run the TUI figures' child process against this endpoint")
	flag.Parse()
	// gRPC's warnings of a dial to a server still starting (a fill's etcd,
	// kine) are not the bench's to print: a figure that fails says why.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, os.Stderr))
	if *watchUntil > 0 {
		if err := watchChild(*watchUntil, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "bench watch:", err)
			os.Exit(1)
		}
		return
	}
	if *tuiEndpoint != "" {
		if err := tuiChild(*tuiEndpoint); err != nil {
			fmt.Fprintln(os.Stderr, "bench tui:", err)
			os.Exit(1)
		}
		return
	}
	if *quick {
		*runs, *tailFor = 1, 3*time.Second
		if !flagSet("kine-keys") {
			*kineKeys = 10_000
		}
	}
	etcdBin, err := etcdBinary(*etcdArg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := bench(*keys, *runs, *quick, *tailFor, etcdBin, *etcdctl, *etcdscope, *fillOnly, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(keys, runs int, quick bool, tailFor time.Duration, etcdBin, etcdctl, etcdscope string, fillOnly bool, only string) error {
	want := func(group string) bool { return only == "" || slices.Contains(strings.Split(only, ","), group) }
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...) }
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	ls, err := layouts()
	if err != nil {
		return err
	}
	// Every group but kine and ls measures the etcd fill; kine brings its
	// own, and ls one of each layout.
	var e *benchEtcd
	if only == "" || slices.ContainsFunc(strings.Split(only, ","), func(g string) bool { return g != "kine" && g != "ls" }) {
		if e, err = openData(etcdBin, fill.Layouts[0], keys, fillOnly, logf); err != nil {
			return err
		}
	}
	if fillOnly {
		if want("ls") {
			for _, l := range ls {
				if _, err := openData(etcdBin, l, keys, true, logf); err != nil {
					return err
				}
			}
		}
		if want("kine") {
			_, _, err = keptKine(repo, *kineKeys, logf)
		}
		return err
	}
	if e != nil {
		defer e.Stop()
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "etcdscope-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	en := env{repo: repo, etcdscope: etcdscope, etcdctl: etcdctl, etcdBin: etcdBin, self: self,
		runs: runs, quick: quick, tmp: tmp, keys: keys, pods: fill.NewPlan(keys).Counts["pods"]}
	measured := "no etcd (the kine group serves its own)"
	if want("ls") {
		measured = fmt.Sprintf("etcd %s (%s, one member per layout)", serverVersion(etcdBin), etcdOrigin(etcdBin))
	}
	if e != nil {
		en.endpoint = e.Endpoint
		measured = fmt.Sprintf("etcd %s (%s, one member)", e.Version, etcdOrigin(etcdBin))
	}
	started := time.Now()
	rows := measureGroups(en, ls, tailFor, want, logf)

	host, _ := os.Hostname()
	fmt.Printf("\n%s, %s, %d cores, %s, %s; %d runs per figure, medians; took %v\n\n",
		time.Now().Format("2006-01-02"), host, runtime.NumCPU(), measured, filepath.Base(etcdctl)+" "+etcdctlVersion(etcdctl), runs,
		time.Since(started).Round(time.Second))
	printTable(os.Stdout, rows)
	if quick {
		fmt.Println("\n(quick run: one pass of each figure on a small fill; the goals are not judged)")
	}
	return nil
}

// measureGroups measures the groups of figures wanted, in the table's
// order.
func measureGroups(en env, ls []fill.Layout, tailFor time.Duration, want func(string) bool, logf func(string, ...any)) []row {
	var rows []row
	var registryKeys float64
	if want("cli") {
		logf("command figures (hyperfine, %d runs each)", en.runs)
		var cli []row
		cli, registryKeys = cliFigures(en)
		rows = append(rows, cli...)
		rows = append(rows, columnsFigure(en))
	}
	if want("ls") {
		rows = append(rows, layoutFigures(en, ls, logf)...)
	}
	if want("history") {
		logf("history figures (hyperfine, %d runs each)", en.runs)
		rows = append(rows, historyFigures(en)...)
	}
	if want("du") {
		rows = append(rows, duFigures(en)...)
	}
	if want("tui") {
		logf("TUI figures")
		rows = append(rows, tuiFigures(en, registryKeys)...)
	}
	if want("offline") {
		logf("offline figures: a snapshot of the fill read with --db (hyperfine, %d runs each)", en.runs)
		rows = append(rows, offlineFigures(en)...)
	}
	if want("check") {
		logf("check figures: the fill restored into a 3-member cluster (hyperfine, %d runs each)", en.runs)
		rows = append(rows, checkFigures(en)...)
	}
	if want("changes") {
		rows = append(rows, changesFigure(en))
	}
	if want("kine") {
		rows = append(rows, kineFigures(en, *kineKeys, logf)...)
	}
	if want("tail") {
		logf("tail lag (%v of puts)", tailFor)
		rows = append(rows, tailLag(en, tailFor))
	}
	if want("record") {
		logf("record beside the tail's writer (%v of puts)", tailFor)
		rows = append(rows, recordFigure(en, tailFor))
	}
	if want("go") {
		logf("Go benchmarks (decode, ui, embedded/kube)")
		rows = append(rows, goFigures(en)...)
	}
	return rows
}

// flagSet says whether the command line gave the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// etcdOrigin says where the etcd binary comes from, for the table's header.
func etcdOrigin(bin string) string {
	if strings.HasPrefix(bin, "/usr/") {
		return "Debian's package"
	}
	return "built from go.etcd.io/etcd/server/v3"
}
