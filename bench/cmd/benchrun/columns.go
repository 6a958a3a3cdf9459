package main

import "fmt"

// columnsFigure times `get pods -A` as kubectl prints it (each pod decoded,
// converted and printed by kube-apiserver's own printers) beside etcdctl's
// listing of the same values, and says its peak RSS: the table keeps its
// rows until it prints, as kubectl's does, but not the objects.
func columnsFigure(e env) row {
	fig := fmt.Sprintf("%dk pods with kubectl's columns (`get pods -A`)", e.pods/1000)
	const goal = "ratio ≤ 2"
	cmd := e.etcdscopeCmd("get", "pods", "-A")
	med, err := hyperfine(e.runs, e.tmp, cmd, e.etcdctlCmd("get", "/registry/pods/", "--prefix"))
	if err != nil {
		return failed(fig, goal, err)
	}
	peak, err := peakRSS(cmd)
	if err != nil {
		return failed(fig, goal, err)
	}
	r := ratioRow(fig, med[0], med[1], 2, "etcdctl --prefix")
	r.ours = fmt.Sprintf("%s, %.0f MiB peak RSS", r.ours, peak/(1<<20))
	return r
}
