// Package termquery keeps bubbletea's init from querying the terminal.
//
// bubbletea v1's init calls lipgloss.HasDarkBackground (tea_init.go), and
// termenv asks the terminal for its background (ESC]11;?) and its cursor
// (ESC[6n), then waits up to termenv.OSCTimeout, 5 s, for an answer: a
// serial console, `script` or a CI terminal never gives one, and every
// command, --version included, stalled. termenv asks nothing when CI is
// set (its isTTY), so this package sets CI while the packages init, and
// Restore puts it back. It must import nothing but the standard library:
// Go inits packages in import-path order among those whose imports are
// done, and this one's path sorts before github.com/muesli/termenv's, so
// it inits before termenv, lipgloss and bubbletea.
package termquery

import "os"

const ciVar = "CI"

// ciWasSet says whether CI was in the environment etcdscope started with.
var _, ciWasSet = os.LookupEnv(ciVar)

func init() {
	if !ciWasSet {
		os.Setenv(ciVar, "1")
	}
}

// Restore takes away the CI this package set, once bubbletea's init has
// run: the TUI's colour profile, and the programs etcdscope starts, see
// the environment as it was.
func Restore() {
	if !ciWasSet {
		os.Unsetenv(ciVar)
	}
}
