package cli

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/spf13/pflag"
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
			"--compaction-interval": "bundled mode: how often kube-apiserver compacts|0 turns it off (default 5m, 1m with --demo busy)",
		}},
		{[]string{"serve", "--help"}, map[string]string{
			"--members":             "etcd members to run|or as many as --data-dir holds)",
			"--demo":                `with --apiserver: the simulated kubelets'|(no simulated components) (default "off")`,
			"--demo-nodes":          "with --demo: nodes (kubelets) to simulate|(default 3)",
			"--compaction-interval": "with --apiserver: how often kube-apiserver compacts|0 turns it off (default 5m, 1m with --demo busy)",
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

// TestCompactionIntervalFlag checks --compaction-interval as the bundled
// cluster gets it: as given, 0 (off) included, else kube-apiserver's 5
// minutes, and 1 minute under the busy demo, whose history would otherwise
// fill the members' files.
func TestCompactionIntervalFlag(t *testing.T) {
	tests := []struct {
		args    []string
		profile demo.Profile
		want    time.Duration
	}{
		{nil, demo.Calm, 5 * time.Minute},
		{nil, demo.Off, 5 * time.Minute},
		{nil, demo.Busy, time.Minute},
		{[]string{"--compaction-interval", "10m"}, demo.Busy, 10 * time.Minute},
		{[]string{"--compaction-interval", "0"}, demo.Calm, 0},
	}
	for _, tc := range tests {
		var f bundledFlags
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		f.register(fs, bundledUsage{demo: demo.Calm})
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := f.compactionFor(tc.profile); got != tc.want {
			t.Errorf("%v under the %s demo: compaction every %v, want %v", tc.args, tc.profile, got, tc.want)
		}
	}
}
