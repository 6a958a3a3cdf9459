package cli

import (
	"strings"
	"testing"
)

// TestRestoreRefusesWhatDoesNotGoTogether: each refusal is one line,
// before anything is read (no etcd runs here).
func TestRestoreRefusesWhatDoesNotGoTogether(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"restore"}, "give an object (KEY or RESOURCE NAME) or --namespace NS"},
		{[]string{"restore", "configmaps", "app", "-l", "app=web"}, "--selector goes with --namespace and no object"},
		{[]string{"restore", "--namespace", "shop", "--rev", "-3"}, "--rev"},
		{[]string{"restore", "--namespace", "shop", "--show-managed-fields"}, "drop --show-managed-fields"},
		{[]string{"restore", "--namespace", "shop", "-o", "wide"}, "unknown output format"},
	} {
		msg := runFails(t, c.args...)
		if !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("etcdscope %s: %q, want one line with %q", strings.Join(c.args, " "), msg, c.want)
		}
	}
}
