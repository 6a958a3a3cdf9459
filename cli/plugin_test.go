package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelpSaysKubectlEtcdscopeWhenRunAsThePlugin runs the binary as kubectl
// runs a plugin, through a link named kubectl-etcdscope and through the
// real kubectl finding that link on the PATH, and as itself: help names the
// command as it was typed, in the usage line and the examples.
func TestHelpSaysKubectlEtcdscopeWhenRunAsThePlugin(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	link := filepath.Join(bin, kubectlPlugin)
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	plugin := []string{
		"Usage:\n  kubectl etcdscope get KEY|RESOURCE [NAME]",
		"\n  kubectl etcdscope get /registry/pods/default/web-0\n",
	}
	tests := []struct {
		name string
		// command is the executable, argv[0] and the arguments before get.
		command func(t *testing.T) (path, argv0 string, args, env []string)
		want    []string
	}{
		{"as itself", func(t *testing.T) (string, string, []string, []string) {
			return self, self, nil, nil
		}, []string{
			"Usage:\n  etcdscope get KEY|RESOURCE [NAME]",
			"\n  etcdscope get /registry/pods/default/web-0\n",
		}},
		{"through a link named kubectl-etcdscope", func(t *testing.T) (string, string, []string, []string) {
			return link, link, nil, nil
		}, plugin},
		{"through kubectl", func(t *testing.T) (string, string, []string, []string) {
			k := newKubectl(t)
			return k.path, "kubectl", []string{"etcdscope"}, []string{
				"PATH=" + bin + string(filepath.ListSeparator) + os.Getenv("PATH"), "HOME=" + k.home}
		}, plugin},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, argv0, args, env := tc.command(t)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, path, append(args, "get", "--help")...)
			cmd.Args[0] = argv0
			cmd.Env = append(etcdscope(nil).Env, env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("help lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestExamplesNameTheCommandAsThePluginAfterAPipe(t *testing.T) {
	for _, tc := range []struct{ argv0, want string }{
		{"/usr/local/bin/etcdscope", "| etcdscope decode --key"},
		{"/root/.krew/bin/kubectl-etcdscope", "| kubectl etcdscope decode --key"},
	} {
		root := newRoot()
		nameAfter(root, tc.argv0)
		decode, _, err := root.Find([]string{"decode"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(decode.Example, tc.want) || strings.Contains(decode.Example, "kubectl kubectl") {
			t.Errorf("as %s, decode's example is\n%s\nwant %q in it", tc.argv0, decode.Example, tc.want)
		}
	}
}
