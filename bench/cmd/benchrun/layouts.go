package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/bench/fill"
)

var layoutNames = flag.String("layout", layoutList(), "the ls group's key layouts, comma-separated, each on a fill of its own: "+layoutList())

func layoutList() string {
	var names []string
	for _, l := range fill.Layouts {
		names = append(names, l.Name)
	}
	return strings.Join(names, ",")
}

// layouts are the layouts --layout names.
func layouts() ([]fill.Layout, error) {
	var ls []fill.Layout
	for name := range strings.SplitSeq(*layoutNames, ",") {
		l, err := fill.LayoutNamed(name)
		if err != nil {
			return nil, fmt.Errorf("--layout: %w", err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// layoutGoal is issue 27's goal for one level on every layout and etcd
// line: at most a tenth of a keys-only listing of it.
const layoutGoal = 0.10

// layoutFigures time `ls LEVEL` beside `etcdctl get LEVEL --prefix
// --keys-only` on a fill of each layout, started one at a time.
func layoutFigures(en env, ls []fill.Layout, logf func(string, ...any)) []row {
	var rows []row
	for _, l := range ls {
		fig := fmt.Sprintf("one level of %s, %s, %dk keys (`ls %s`, layout %s)", l.Level, l.About, en.keys/1000, l.Level, l.Name)
		e, err := openData(en.etcdBin, l, en.keys, false, logf)
		if err != nil {
			rows = append(rows, failed(fig, fmt.Sprintf("ratio ≤ %g", layoutGoal), err))
			continue
		}
		en.endpoint = e.Endpoint
		logf("ls on layout %s (hyperfine, %d runs each)", l.Name, en.runs)
		med, err := hyperfine(en.runs, en.tmp, en.etcdscopeCmd("ls", l.Level), en.etcdctlCmd("get", l.Level, "--prefix", "--keys-only"))
		e.Stop()
		if err != nil {
			rows = append(rows, failed(fig, fmt.Sprintf("ratio ≤ %g", layoutGoal), err))
			continue
		}
		rows = append(rows, ratioRow(fig, med[0], med[1], layoutGoal, "etcdctl --keys-only"))
	}
	return rows
}
