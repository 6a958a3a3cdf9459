package cli

import (
	"fmt"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"testing"
)

// TestATimeoutOfZeroOrLessIsRefused: --dial-timeout and --command-timeout
// of 0 or less, from the flag or ETCDCTL_*, are errors, not the default.
func TestATimeoutOfZeroOrLessIsRefused(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dial-timeout", "0"}, "Error: --dial-timeout 0s: must be positive, such as 2s"},
		{[]string{"--dial-timeout", "-1s"}, "Error: --dial-timeout -1s: must be positive, such as 2s"},
		{[]string{"--command-timeout", "0s"}, "Error: --command-timeout 0s: must be positive, such as 5s"},
	} {
		if msg := runFails(t, append([]string{"--endpoints", ep, "ls"}, tc.args...)...); msg != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, msg, tc.want)
		}
	}
	t.Setenv("ETCDCTL_DIAL_TIMEOUT", "0")
	if msg, want := runFails(t, "--endpoints", ep, "ls"), "Error: --dial-timeout 0s: must be positive, such as 2s"; msg != want {
		t.Errorf("ETCDCTL_DIAL_TIMEOUT=0: %q, want %q", msg, want)
	}
}
