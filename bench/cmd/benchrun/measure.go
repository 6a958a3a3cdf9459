package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// hyperfine times each command as a process (no shell, output discarded)
// in one run, alternating nothing but sharing the machine's state, and
// returns each one's median in seconds.
func hyperfine(runs int, tmp string, cmds ...[]string) ([]float64, error) {
	out := filepath.Join(tmp, "hyperfine.json")
	args := []string{"-N", "--style", "none", "--warmup", "1", "--runs", strconv.Itoa(runs), "--export-json", out}
	for _, c := range cmds {
		args = append(args, shellJoin(c))
	}
	cmd := exec.Command("hyperfine", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("hyperfine %q: %w", args, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var res struct {
		Results []struct{ Median float64 }
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	medians := make([]float64, len(res.Results))
	for i, r := range res.Results {
		medians[i] = r.Median
	}
	return medians, nil
}

// shellJoin quotes args for hyperfine, which splits a command as a shell
// would even with -N.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// goBench runs the benchmarks matching pattern in pkg count times and
// returns, for each benchmark and metric (ns/op, or a custom one), the
// median of the runs.
func goBench(repo, pkg, pattern string, count int, extra ...string) (map[string]map[string]float64, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-count", strconv.Itoa(count)}, extra...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = repo
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s %s: %w\n%s", strings.Join(args, " "), pkg, err, out.String())
	}
	samples := map[string]map[string][]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				samples[name][f[i+1]] = append(samples[name][f[i+1]], v)
			}
		}
	}
	res := map[string]map[string]float64{}
	for name, metrics := range samples {
		res[name] = map[string]float64{}
		for m, vs := range metrics {
			res[name][m] = median(vs)
		}
	}
	return res, nil
}

func sortFloats(vs []float64) { slices.Sort(vs) }

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
