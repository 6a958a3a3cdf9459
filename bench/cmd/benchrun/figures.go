package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// env is what every figure needs: the binaries, the etcd holding the fill,
// how many runs make a median.
type env struct {
	repo      string // the module's root, for go test
	etcdscope string
	etcdctl   string
	etcdBin   string // the etcd the fill runs on
	self      string // this program, run again for figures that need their own process
	endpoint  string
	runs      int
	quick     bool // CI: one short pass of each figure, no goals judged
	tmp       string
	keys      int
	pods      int
}

// commandTimeout is both tools' --command-timeout: a listing of 1M keys
// takes seconds on a busy machine, past their default of 5 s.
const commandTimeout = "--command-timeout=60s"

func (e env) etcdctlCmd(args ...string) []string {
	return append([]string{e.etcdctl, "--endpoints", e.endpoint, commandTimeout}, args...)
}

func (e env) etcdscopeCmd(args ...string) []string {
	return append([]string{e.etcdscope, "--endpoints", e.endpoint, commandTimeout}, args...)
}

// ratioRow compares two medians in seconds: ratio ours/theirs against max.
func ratioRow(figure string, ours, theirs, max float64, theirsName string) row {
	r := ours / theirs
	return row{
		figure: figure, ours: ms(ours), theirs: fmt.Sprintf("%s %s", ms(theirs), theirsName),
		ratio: fmt.Sprintf("%.3f", r), goal: fmt.Sprintf("ratio ≤ %g", max), met: r <= max, measured: true,
	}
}

// cliFigures are the commands timed side by side with etcdctl: one level of
// /registry, the pods' keys paged, the pods decoded to JSON and to YAML, and
// the process start.
// The etcdctl listing of /registry is also the yardstick of the TUI's first
// screen, returned as registryKeys.
func cliFigures(e env) (rows []row, registryKeys float64) {
	lsFig := fmt.Sprintf("one level of /registry, %dk keys (`ls /registry`)", e.keys/1000)
	med, err := hyperfine(e.runs, e.tmp,
		e.etcdscopeCmd("ls", "/registry"),
		e.etcdctlCmd("get", "/registry", "--prefix", "--keys-only"))
	if err != nil {
		rows = append(rows, failed(lsFig, "ratio ≤ 0.05", err))
	} else {
		registryKeys = med[1]
		rows = append(rows, ratioRow(lsFig, med[0], med[1], 0.05, "etcdctl --keys-only"))
	}

	keysFig := fmt.Sprintf("keys of %dk pods, paged (`get pods -A --keys`)", e.pods/1000)
	med, err = hyperfine(e.runs, e.tmp,
		e.etcdscopeCmd("get", "pods", "-A", "--keys"),
		e.etcdctlCmd("get", "/registry/pods/", "--prefix", "--keys-only"))
	if err != nil {
		rows = append(rows, failed(keysFig, "ratio ≤ 1.2", err))
	} else {
		rows = append(rows, ratioRow(keysFig, med[0], med[1], 1.2, "etcdctl --keys-only"))
	}

	jsonFig := fmt.Sprintf("%dk pods decoded (`get pods -A -o json`)", e.pods/1000)
	med, err = hyperfine(e.runs, e.tmp,
		e.etcdscopeCmd("get", "pods", "-A", "-o", "json"),
		e.etcdctlCmd("get", "/registry/pods/", "--prefix"))
	if err != nil {
		rows = append(rows, failed(jsonFig, "ratio ≤ 3", err))
	} else {
		rows = append(rows, ratioRow(jsonFig, med[0], med[1], 3, "etcdctl --prefix"))
	}
	return append(rows, yamlListFigure(e), startFigure(e)), registryKeys
}

// startFigure times the start of the process itself, `--help`, which
// connects nowhere: what every command pays before it does anything (the
// init of every package linked in, the control plane's among them). The
// yardstick is a start of the same weight, kubectl's (`kubectl version
// --client`, which asks no server): etcdctl's start (5 ms) links nothing
// of Kubernetes, and issue 27 accepts a start of kubectl's order for a
// binary that links the control plane by design.
func startFigure(e env) row {
	const fig, goal = "process start (`etcdscope --help`)", 1.2
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return failed(fig, fmt.Sprintf("ratio ≤ %g", goal), err)
	}
	runs := e.runs
	if !e.quick {
		runs = max(runs, 20) // tens of ms each: more runs for a steady median
	}
	med, err := hyperfine(runs, e.tmp, []string{e.etcdscope, "--help"}, []string{kubectl, "version", "--client"})
	if err != nil {
		return failed(fig, fmt.Sprintf("ratio ≤ %g", goal), err)
	}
	return ratioRow(fig, med[0], med[1], goal, "kubectl version --client")
}

// yamlListFigure times `get pods -A -o yaml` beside etcdctl's listing with
// values, and measures its peak RSS: the List streams, so memory must not
// grow with the number of pods.
func yamlListFigure(e env) row {
	fig := fmt.Sprintf("%dk pods decoded as YAML (`get pods -A -o yaml`)", e.pods/1000)
	return rssRatioFigure(e, fig, 3, e.etcdscopeCmd("get", "pods", "-A", "-o", "yaml"),
		e.etcdctlCmd("get", "/registry/pods/", "--prefix"), "etcdctl --prefix")
}

// rssRatioFigure times cmd beside theirs, against a ratio of maxRatio, and
// measures cmd's peak RSS against 200 MB.
func rssRatioFigure(e env, fig string, maxRatio float64, cmd, theirs []string, theirsName string) row {
	med, err := hyperfine(e.runs, e.tmp, cmd, theirs)
	if err != nil {
		return failed(fig, fmt.Sprintf("ratio ≤ %g, peak RSS ≤ 200 MB", maxRatio), err)
	}
	return withPeakRSS(e, ratioRow(fig, med[0], med[1], maxRatio, theirsName), cmd)
}

// withPeakRSS adds to r the peak RSS of cmd, the median of e.runs runs,
// and to r's goal that it stays within 200 MB.
func withPeakRSS(e env, r row, cmd []string) row {
	goal := r.goal + ", peak RSS ≤ 200 MB"
	var peaks []float64
	for range e.runs {
		peak, err := peakRSS(cmd)
		if err != nil {
			return failed(r.figure, goal, err)
		}
		peaks = append(peaks, peak)
	}
	peak := median(peaks)
	r.ours = fmt.Sprintf("%s, %.0f MiB peak RSS", r.ours, peak/(1<<20))
	r.goal, r.met = goal, r.met && peak <= 200e6
	return r
}

// peakRSS runs cmd, its output discarded as hyperfine discards it, and
// returns its peak resident set in bytes.
func peakRSS(cmd []string) (float64, error) {
	c := exec.Command(cmd[0], cmd[1:]...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	rss, err := runMeasured(c)
	if err != nil {
		return 0, fmt.Errorf("%s: %w\n%s", strings.Join(cmd, " "), err, stderr.String())
	}
	return rss, nil
}

// runMeasured runs c under GNU time and returns c's peak resident set in
// bytes. The rusage that wait4 gives for a child of benchrun itself would
// count benchrun's own pages: Go starts a child with vfork, in benchrun's
// address space, and the kernel keeps that space's high-water mark across
// the exec. time is small, and forks c from its own address space.
func runMeasured(c *exec.Cmd) (float64, error) {
	wait, err := startMeasured(c)
	if err != nil {
		return 0, err
	}
	return wait()
}

// startMeasured starts c under GNU time, as runMeasured runs it; wait waits
// for its end and returns its peak resident set in bytes.
func startMeasured(c *exec.Cmd) (wait func() (float64, error), err error) {
	out, err := os.CreateTemp("", "benchrun-rss-")
	if err != nil {
		return nil, err
	}
	out.Close()
	c.Args = append([]string{timeBinary, "-f", "%M", "-o", out.Name(), c.Path}, c.Args[1:]...)
	c.Path = timeBinary
	if err := c.Start(); err != nil {
		os.Remove(out.Name())
		return nil, err
	}
	return func() (float64, error) {
		defer os.Remove(out.Name())
		runErr := c.Wait()
		b, err := os.ReadFile(out.Name())
		if err != nil {
			return 0, err
		}
		// The last line is %M, KiB; a line before it may say how c exited.
		lines := strings.Fields(strings.TrimSpace(string(b)))
		if len(lines) == 0 {
			return 0, fmt.Errorf("%s wrote no peak RSS (%v)", timeBinary, runErr)
		}
		kib, err := strconv.ParseFloat(lines[len(lines)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%s wrote %q, not a peak RSS (%v)", timeBinary, b, runErr)
		}
		return kib * 1024, runErr
	}, nil
}

// timeBinary is GNU time (Debian's time package, which .ci/run installs).
const timeBinary = "/usr/bin/time"

// goFigures are the figures that live in one package, from its Go
// benchmarks: decoding, the UI's tail ingest, creates through the API
// server.
func goFigures(e env) []row {
	var rows []row
	count := e.runs
	benchtime := []string{}
	if e.quick {
		count, benchtime = 1, []string{"-benchtime", "1x"}
	}

	const decodeFig, decodeGoal = "decode + YAML of a Pod", "ratio ≤ 5"
	if res, err := goBench(e.repo, "./decode", "^Benchmark(DecodePodYAML|UnmarshalPodProto)$", count, benchtime...); err != nil {
		rows = append(rows, failed(decodeFig, decodeGoal, err))
	} else {
		ours, floor := res["BenchmarkDecodePodYAML"]["ns/op"], res["BenchmarkUnmarshalPodProto"]["ns/op"]
		r := ours / floor
		rows = append(rows, row{figure: decodeFig, ours: fmt.Sprintf("%.1f µs", ours/1000),
			theirs: fmt.Sprintf("%.1f µs protobuf unmarshal", floor/1000), ratio: fmt.Sprintf("%.1f", r),
			goal: decodeGoal, met: r <= 5, measured: true})
	}

	const ingestFig, ingestGoal = "tail ingest into the UI model, 50k burst", "≥ 100k events/s"
	if res, err := goBench(e.repo, "./ui", "^BenchmarkTailIngest50k$", count, benchtime...); err != nil {
		rows = append(rows, failed(ingestFig, ingestGoal, err))
	} else {
		rate := 50_000 / (res["BenchmarkTailIngest50k"]["ns/op"] / 1e9)
		rows = append(rows, row{figure: ingestFig, ours: fmt.Sprintf("%.0fk events/s", rate/1000),
			goal: ingestGoal, met: rate >= 100_000, measured: true})
	}

	const createsFig, createsGoal = "creates/s through the in-process kube-apiserver", "ratio ≥ 0.9"
	createsTime := []string{"-benchtime", "2000x"}
	if e.quick {
		createsTime = []string{"-benchtime", "50x"}
	}
	if res, err := goBench(e.repo, "./embedded/kube", "^BenchmarkCreates$", count, createsTime...); err != nil {
		rows = append(rows, failed(createsFig, createsGoal, err))
	} else {
		server := res["BenchmarkCreates/apiserver"]["creates/s"]
		alone := res["BenchmarkCreates/standalone"]["creates/s"]
		direct := res["BenchmarkCreates/etcd-put"]["creates/s"]
		r := server / alone
		rows = append(rows, row{figure: createsFig, ours: fmt.Sprintf("%.0f/s", server),
			theirs: fmt.Sprintf("%.0f/s standalone kube-apiserver (%.0f/s optimistic etcd puts)", alone, direct), ratio: fmt.Sprintf("%.2f", r),
			goal: createsGoal, met: r >= 0.9, measured: true})
	}
	return rows
}
