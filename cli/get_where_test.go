package cli

import (
	"strings"
	"testing"
)

// TestGetWhereErrors: a --where that does not compile fails with CEL's
// message, exit status 1, and prints nothing.
func TestGetWhereErrors(t *testing.T) {
	code, out, errOut := runCommand(t, "get", "--db", kube17+"boltdb-db", "pods", "-A", "--where", `object.status.phase = "Running"`)
	want := "Error: --where: 1:21: Syntax error: token recognition error at: '= ' (and 1 more)\n | object.status.phase = \"Running\"\n | ....................^\n"
	if code != 1 || out != "" || !strings.HasPrefix(errOut, want[:40]) || !strings.Contains(errOut, want[40:]) {
		t.Errorf("exit status %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errOut, want)
	}
}
