package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// sidecarSuffix names the key index etcdscope keeps beside a data file
// (etcdview's sidecar).
const sidecarSuffix = ".etcdscope-index"

// offlineFigures read a snapshot of the fill with --db, as an operator reads
// the snapshot of a cluster in trouble: each command first on the file
// alone (the key index built by a pass over the file), then again with the
// index it left beside the file. The snapshot is saved by etcdctl from the
// bench's etcd, which holds the fill's data file locked.
func offlineFigures(e env) []row {
	db := filepath.Join(e.tmp, "snapshot.db")
	defer os.Remove(db)
	defer os.Remove(db + sidecarSuffix)
	save := e.etcdctlCmd("snapshot", "save", db)
	if out, err := exec.Command(save[0], save[1:]...).CombinedOutput(); err != nil {
		return []row{failed("offline figures", "", fmt.Errorf("etcdctl snapshot save: %v: %s", err, out))}
	}
	fi, err := os.Stat(db)
	if err != nil {
		return []row{failed("offline figures", "", err)}
	}
	on := fmt.Sprintf("on a %d MB snapshot of %dk keys", fi.Size()>>20, e.keys/1000)
	rows := []row{
		coldWarm(e, db, fmt.Sprintf("`ls -l /registry --db` %s", on), 3, "ls", "-l", "/registry"),
		coldWarm(e, db, "`get pods -A --keys --db`", 2, "get", "pods", "-A", "--keys"),
		coldWarm(e, db, "`history --db` of "+historyLease, 2, "history", historyLease),
		tuiOnFile(e, db),
	}
	return append(rows, heapOnFile(e, db))
}

// coldWarm times the etcdscope command args on db, first with no index
// beside it, then with the index the first runs left. The goal, in
// seconds, is the first's.
func coldWarm(e env, db, figure string, goal float64, args ...string) row {
	goalText := fmt.Sprintf("≤ %g s without an index", goal)
	cmd := append([]string{e.etcdscope, "--db", db}, args...)
	cold := []string{"sh", "-c", "rm -f " + shellJoin([]string{db + sidecarSuffix}) + " && exec " + shellJoin(cmd)}
	med, err := hyperfine(e.runs, e.tmp, cold, cmd)
	if err != nil {
		return failed(figure, goalText, err)
	}
	return row{figure: figure, ours: fmt.Sprintf("%s without an index, %s with it", ms(med[0]), ms(med[1])),
		goal: goalText, met: med[0] <= goal, measured: true}
}

// tuiOnFile times the TUI from its start to the /registry level drawn, in
// a tmux pane, the index removed before every other run.
func tuiOnFile(e env, db string) row {
	const fig, goal = "first screen of the TUI on the snapshot, process start included", "≤ 2 s without an index"
	var cold, warm []float64
	for range e.runs {
		// Each run with an index reads the one the run before it left.
		for _, withIndex := range []bool{false, true} {
			if !withIndex {
				os.Remove(db + sidecarSuffix)
			}
			s, err := firstScreen(e, db)
			if err != nil {
				return failed(fig, goal, err)
			}
			if withIndex {
				warm = append(warm, s)
			} else {
				cold = append(cold, s)
			}
		}
	}
	return row{figure: fig, ours: fmt.Sprintf("%s without an index, %s with it", ms(median(cold)), ms(median(warm))),
		goal: goal, met: median(cold) <= 2, measured: true}
}

// firstScreen starts `etcdscope --db db` in a tmux pane of its own and
// reads the pane until the /registry level shows, up to a minute.
func firstScreen(e env, db string) (float64, error) {
	// A server of its own each time: one killed may still hold its socket
	// when the next starts.
	sock := filepath.Join(e.tmp, fmt.Sprintf("offline-tmux-%d.sock", time.Now().UnixNano()))
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
	}
	defer tmux("kill-server")
	start := time.Now()
	if out, err := tmux("new-session", "-d", "-x", "160", "-y", "45", shellJoin([]string{e.etcdscope, "--db", db})); err != nil {
		return 0, fmt.Errorf("tmux: %v: %s", err, out)
	}
	for time.Since(start) < time.Minute {
		screen, err := tmux("capture-pane", "-p")
		if err == nil && bytes.Contains(screen, []byte("namespaces/")) {
			return time.Since(start).Seconds(), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	screen, _ := tmux("capture-pane", "-p")
	return 0, fmt.Errorf("no /registry level after a minute; the pane shows:\n%s", screen)
}

// gcLine is a line of GODEBUG=gctrace=1: the heap when the cycle began,
// when it ended, and what was live, in MB.
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// heapOnFile is the Go heap of `ls -l --db` at its peak, from the runtime's
// own trace of each garbage collection, without an index and with one.
// The pages of the file bbolt maps are not heap (they count in the RSS,
// given beside).
func heapOnFile(e env, db string) row {
	const fig, goal = "Go heap of `ls -l --db` at its peak (GODEBUG=gctrace=1)", "≤ 300 MB"
	var texts []string
	var worst float64
	for _, withIndex := range []bool{false, true} {
		var peaks, rss []float64
		for range e.runs {
			// The runs with an index read the one the last run without
			// left.
			if !withIndex {
				os.Remove(db + sidecarSuffix)
			}
			peak, r, err := tracedHeap(e, db)
			if err != nil {
				return failed(fig, goal, err)
			}
			peaks, rss = append(peaks, peak), append(rss, r)
		}
		worst = max(worst, slices.Max(peaks))
		what := "without an index"
		if withIndex {
			what = "with it"
		}
		texts = append(texts, fmt.Sprintf("%.0f MB %s (RSS %.0f MiB)", median(peaks), what, median(rss)/(1<<20)))
	}
	return row{figure: fig, ours: texts[0] + ", " + texts[1], goal: goal, met: worst <= 300, measured: true}
}

// tracedHeap runs `ls -l /registry --db db` with the garbage collector's
// trace on, and returns the bound of its heap: the largest heap a cycle
// began or ended with, or twice what the last one left live, which the heap
// reaches before the next cycle at the most (GOGC=100). And its peak RSS.
func tracedHeap(e env, db string) (heapMB, rssBytes float64, err error) {
	c := exec.Command(e.etcdscope, "--db", db, "ls", "-l", "/registry")
	c.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC=100")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	rss, err := runMeasured(c)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	var live float64
	for _, m := range gcLine.FindAllStringSubmatch(stderr.String(), -1) {
		start, _ := strconv.ParseFloat(m[1], 64)
		end, _ := strconv.ParseFloat(m[2], 64)
		live, _ = strconv.ParseFloat(m[3], 64)
		heapMB = max(heapMB, start, end)
	}
	if heapMB == 0 {
		return 0, 0, errors.New("no garbage collection traced")
	}
	return max(heapMB, 2*live), rss, nil
}
