package cli

import (
	"strings"
	"testing"
)

// TestNegativeRevisionIsRefused: etcd reads a negative revision as the
// newest, so ls and get used to print the head for --rev -5 while du and
// owners refused it; every command refuses it alike, before reading, and
// the explorer (the root command, no arguments) before it opens anything.
func TestNegativeRevisionIsRefused(t *testing.T) {
	db := kube17 + "boltdb-db"
	for _, args := range [][]string{
		{},
		{"ls", "/registry"},
		{"ls", "/registry", "--count"},
		{"get", "ns"},
		{"get", "/registry/namespaces/default"},
		{"watch", "/registry"},
		{"du"},
		{"owners", "ns", "default"},
	} {
		msg := runFails(t, append(append(args, "--db", db), "--rev", "-5")...)
		if want := "Error: --rev -5: want 0 (the newest) or more"; msg != want {
			t.Errorf("%s --rev -5: %s, want %s", strings.Join(args, " "), msg, want)
		}
	}
}
