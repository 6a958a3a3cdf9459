package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// etcdutl is what `du --db` is compared with: `etcdutl snapshot status`,
// which reads every page of the file too (a check of its pages, a hash
// and every key's revisions). bench/run builds etcdutl 3.7.3 from
// bench/etcdutl.
var etcdutl = flag.String("etcdutl", "", "etcdutl to compare du --db with (bench/run builds etcdutl 3.7.3)")

// duFigures are `du /registry` on the live etcd beside etcdctl reading the
// same values, and `du --db` on a snapshot of it beside etcdutl snapshot
// status.
func duFigures(e env) []row {
	return append([]row{duLiveFigure(e)}, duOfflineFigures(e)...)
}

// duLiveFigure times `du /registry` beside `etcdctl get /registry --prefix
// -w protobuf`, which reads the same values (in one response), and measures
// du's peak RSS: it reads in ranges, a few in flight, and keeps sums.
func duLiveFigure(e env) row {
	fig := fmt.Sprintf("where the bytes go, %dk keys (`du /registry`)", e.keys/1000)
	return rssRatioFigure(e, fig, 1.0, e.etcdscopeCmd("du", "/registry"),
		e.etcdctlCmd("get", "/registry", "--prefix", "-w", "protobuf"), "etcdctl get --prefix -w protobuf")
}

// duOfflineFigures time `du --db` on a snapshot of the fill beside
// `etcdutl snapshot status` of the same file, and du's Go heap at its peak.
func duOfflineFigures(e env) []row {
	const fig, goal = "`du --db` on a snapshot", "ratio ≤ 1.0"
	const heapFig, heapGoal = "Go heap of `du --db` at its peak (GODEBUG=gctrace=1)", "≤ 300 MB"
	if *etcdutl == "" {
		return []row{failed(fig, goal, fmt.Errorf("no --etcdutl given"))}
	}
	db := filepath.Join(e.tmp, "du-snapshot.db")
	defer os.Remove(db)
	save := e.etcdctlCmd("snapshot", "save", db)
	if out, err := exec.Command(save[0], save[1:]...).CombinedOutput(); err != nil {
		return []row{failed(fig, goal, fmt.Errorf("etcdctl snapshot save: %v: %s", err, out))}
	}
	// etcdscope opens a data file with a key index of its keys, built by a
	// pass over the file and kept beside it for the next command: the first
	// du on a snapshot pays that pass, the next ones not. Both are timed; the
	// goal is the first's.
	defer removeIndexes(db)
	du := []string{e.etcdscope, "--db", db, "du", "/registry"}
	cold := []string{"sh", "-c", "rm -f " + shellJoin([]string{db}) + ".* && exec " + shellJoin(du)}
	med, err := hyperfine(e.runs, e.tmp, cold, du, []string{*etcdutl, "snapshot", "status", db})
	if err != nil {
		return []row{failed(fig, goal, err)}
	}
	r := ratioRow(fig, med[0], med[2], 1.0, "etcdutl snapshot status")
	r.ours = fmt.Sprintf("%s without an index, %s with it (%.3f)", ms(med[0]), ms(med[1]), med[1]/med[2])
	rows := []row{r}
	var colds, warms []float64
	for range e.runs {
		removeIndexes(db)
		c, err := peakHeap(du)
		if err == nil {
			var w float64
			w, err = peakHeap(du)
			colds, warms = append(colds, c), append(warms, w)
		}
		if err != nil {
			return append(rows, failed(heapFig, heapGoal, err))
		}
	}
	worst := max(median(colds), median(warms))
	return append(rows, row{figure: heapFig, ours: fmt.Sprintf("%.0f MB without an index, %.0f MB with it", median(colds), median(warms)),
		goal: heapGoal, met: worst <= 300, measured: true})
}

// removeIndexes removes what etcdscope wrote beside db.
func removeIndexes(db string) {
	matches, _ := filepath.Glob(db + ".*")
	for _, m := range matches {
		os.Remove(m)
	}
}

// peakHeap runs cmd with the garbage collector's trace on and returns the
// largest heap, in MB, that a cycle began or ended with: each line of
// GODEBUG=gctrace=1 reads "... start->end->live MB, goal MB goal ...". The
// pages of the file bbolt maps are not heap.
func peakHeap(cmd []string) (float64, error) {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(cmd, " "), err, stderr.String())
	}
	var peak float64
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for i, w := range f {
			if w != "MB," || i == 0 || !strings.Contains(f[i-1], "->") {
				continue
			}
			for _, n := range strings.Split(f[i-1], "->")[:2] {
				v, _ := strconv.ParseFloat(n, 64)
				peak = max(peak, v)
			}
		}
	}
	if peak == 0 {
		return 0, fmt.Errorf("%s: no garbage collection traced", strings.Join(cmd, " "))
	}
	return peak, nil
}
