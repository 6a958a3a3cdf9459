package cli

import (
	"math"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
)

// TestBundledFlagsKeepEachCommandsHelp checks the bundled cluster's flags,
// declared once, as each command's --help shows them: the explorer always
// runs the control plane and a calm load, serve only with --apiserver and
// no load unless asked.
func TestBundledFlagsKeepEachCommandsHelp(t *testing.T) {
	tests := []struct {
		args []string
		want map[string]string // flag → the start and the end of its help line
	}{
		{[]string{"--help"}, map[string]string{
			"--members":             "members of the bundled etcd cluster|or as many as --data-dir holds)",
			"--demo":                `bundled mode: the simulated kubelets'|(the control plane only, nothing simulated) (default "calm")`,
			"--demo-nodes":          "bundled mode: simulated nodes|(default 3)",
			"--compaction-interval": "bundled mode: how often kube-apiserver compacts|0 turns it off (default 5m0s)",
		}},
		{[]string{"serve", "--help"}, map[string]string{
			"--members":             "etcd members to run|or as many as --data-dir holds)",
			"--demo":                `with --apiserver: the simulated kubelets'|(no simulated components) (default "off")`,
			"--demo-nodes":          "with --demo: nodes (kubelets) to simulate|(default 3)",
			"--compaction-interval": "with --apiserver: how often kube-apiserver compacts|0 turns it off (default 5m0s)",
		}},
	}
	for _, tc := range tests {
		help := run(t, tc.args...)
		for flag, want := range tc.want {
			start, end, _ := strings.Cut(want, "|")
			line := flagLine(help, flag)
			if _, usage, _ := strings.Cut(strings.TrimSpace(line), "   "); !strings.HasPrefix(strings.TrimSpace(usage), start) || !strings.HasSuffix(line, end) {
				t.Errorf("etcdscope %s: %s line %q, want it to start %q and end %q", strings.Join(tc.args, " "), flag, line, start, end)
			}
		}
	}
}

// flagLine is the line of help that declares flag.
func flagLine(help, flag string) string {
	for line := range strings.Lines(help) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == flag {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

// TestMemoryLimitFlag checks --memory-limit as the bundled cluster gets it:
// Kubernetes' quantities, 0 for none, the demo's default without the flag
// (GOMEMLIMIT's when that is set), and one line of error for anything else,
// before a cluster starts.
func TestMemoryLimitFlag(t *testing.T) {
	tests := []struct {
		flag, env string
		want      int64
	}{
		{"512Mi", "", 512 << 20},
		{"1G", "", 1e9},
		{"0", "", math.MaxInt64},
		{"", "", controlplane.DefaultMemoryLimit(demo.Busy)},
		{"", "700MiB", 0}, // the runtime read GOMEMLIMIT itself
	}
	for _, tc := range tests {
		t.Setenv("GOMEMLIMIT", tc.env)
		f := bundledFlags{memoryLimit: tc.flag}
		if got, err := f.limit(demo.Busy); err != nil || got != tc.want {
			t.Errorf("--memory-limit %q, GOMEMLIMIT %q: %d, %v; want %d", tc.flag, tc.env, got, err, tc.want)
		}
	}
	for _, args := range [][]string{{"--memory-limit", "lots"}, {"serve", "--apiserver", "--memory-limit", "-1Gi"}} {
		if msg := runFails(t, args...); !strings.Contains(msg, "--memory-limit") || !strings.Contains(msg, "512Mi") {
			t.Errorf("etcdscope %s: %q, want what --memory-limit takes", strings.Join(args, " "), msg)
		}
	}
}
