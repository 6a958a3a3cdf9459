package cli

import (
	"path/filepath"
	"regexp"

	"github.com/spf13/cobra"
)

// kubectlPlugin is the executable name that makes etcdscope a kubectl
// plugin: kubectl runs `kubectl etcdscope ARGS` as the kubectl-etcdscope it
// finds on the PATH (krew links it there), with that path as argv[0].
const kubectlPlugin = "kubectl-etcdscope"

// commandName is the example lines' name of the command, at the start of a
// line or after a pipe, before its arguments.
var commandName = regexp.MustCompile(`(?m)(^\s*|\|\s*)etcdscope( |$)`)

// nameAfter makes usage lines, help and examples name the command as the
// user typed it: `kubectl etcdscope get` when argv0 is kubectl's plugin, so
// that what help shows can be copied; root is unchanged otherwise. Cobra
// builds every command path from the root's display name.
func nameAfter(root *cobra.Command, argv0 string) {
	if filepath.Base(argv0) != kubectlPlugin {
		return
	}
	const name = "kubectl etcdscope"
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.Example = commandName.ReplaceAllString(cmd.Example, "${1}"+name+"${2}")
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
