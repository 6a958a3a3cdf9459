package cli

import (
	"fmt"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"testing"
)

// TestEveryCommandRefusesAnUnknownFormatBeforeItReads gives each command
// an -o it does not print, and an endpoint that refuses: the error names
// the formats the command has, in one wording, and comes before any
// connection is tried.
func TestEveryCommandRefusesAnUnknownFormatBeforeItReads(t *testing.T) {
	refused := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	for _, tc := range []struct {
		args   []string
		output string
		want   string
	}{
		{[]string{"get", "po", "web-0"}, "table", "want yaml, json, raw, wide, name, custom-columns=..., custom-columns-file=..., go-template=..., go-template-file=..., jsonpath=..., jsonpath-file=..., jsonpath-as-json=..., template=... or templatefile=..."},
		{[]string{"history", "/registry/pods/default/web-0"}, "wide", "want yaml or json"},
		{[]string{"watch"}, "wide", "want json"},
		{[]string{"status"}, "wide", "want table or json"},
		{[]string{"decode"}, "wide", "want yaml, json or proto"},
	} {
		msg := runFails(t, append(tc.args, "--endpoints", refused, "-o", tc.output)...)
		if want := fmt.Sprintf("Error: unknown output format %q: %s", tc.output, tc.want); msg != want {
			t.Errorf("%s -o %s: %q, want %q", tc.args[0], tc.output, msg, want)
		}
	}
}
