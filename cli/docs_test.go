package cli

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docsCommands is the reference of every command; --help is the same
// reference at the terminal, so the two must name the same flags.
const docsCommands = "../docs/commands.md"

var (
	// A command's section starts at a heading that is the command line
	// itself, as a user types it: ## `etcdscope get`.
	docsCommandHeading = regexp.MustCompile("^## `(etcdscope(?: [a-z]+)?)`\\s*$")
	// A flag is documented in the first cell of a table row: | `-o`, `--output` |.
	docsFlagRow  = regexp.MustCompile("^\\|([^|]*)\\|")
	docsFlagName = regexp.MustCompile("`(--?[a-zA-Z][a-zA-Z0-9-]*)")
	// A Markdown link, inline: [text](target).
	docsLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// docFlags is one command's section of docs/commands.md: the flags its
// tables name, each with the line it is on, for the failure message.
type docFlags struct {
	line  int
	flags map[string]int
}

// parseCommandDocs reads the command sections of docs/commands.md. Any other
// second-level heading ends a section; third-level headings stay inside it.
func parseCommandDocs(t *testing.T) map[string]*docFlags {
	t.Helper()
	text, err := os.ReadFile(docsCommands)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]*docFlags{}
	var cur *docFlags
	for i, line := range strings.Split(string(text), "\n") {
		if m := docsCommandHeading.FindStringSubmatch(line); m != nil {
			if docs[m[1]] != nil {
				t.Errorf("%s:%d: %s has a second section (the first is at line %d)", docsCommands, i+1, m[1], docs[m[1]].line)
			}
			cur = &docFlags{line: i + 1, flags: map[string]int{}}
			docs[m[1]] = cur
			continue
		}
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ") {
			cur = nil
			continue
		}
		m := docsFlagRow.FindStringSubmatch(line)
		if cur == nil || m == nil {
			continue
		}
		for _, f := range docsFlagName.FindAllStringSubmatch(m[1], -1) {
			cur.flags[f[1]] = i + 1
		}
	}
	return docs
}

// docsRoot is the command tree as a user runs it: cobra adds help, the
// completion command and the --help and --version flags only when it
// executes, so they are added here as Execute would.
func docsRoot() *cobra.Command {
	root := newRoot()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	for _, c := range root.Commands() {
		c.InitDefaultHelpFlag()
	}
	return root
}

// hasFlag says whether cmd takes the flag as a user types it (--name or -n),
// its own or inherited from a parent's persistent flags.
func hasFlag(cmd *cobra.Command, flag string) bool {
	if name, ok := strings.CutPrefix(flag, "--"); ok {
		return cmd.Flag(name) != nil
	}
	short := strings.TrimPrefix(flag, "-")
	return len(short) == 1 && (cmd.LocalFlags().ShorthandLookup(short) != nil || cmd.InheritedFlags().ShorthandLookup(short) != nil)
}

func TestDocsCommandsFlagsExist(t *testing.T) {
	docs := parseCommandDocs(t)
	root := docsRoot()
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		d := docs[name]
		cmd, rest, err := root.Find(strings.Fields(name)[1:])
		if err != nil || len(rest) > 0 || cmd.CommandPath() != name {
			t.Errorf("%s:%d: documents %s, which is no command", docsCommands, d.line, name)
			continue
		}
		for _, flag := range slices.Sorted(maps.Keys(d.flags)) {
			if !hasFlag(cmd, flag) {
				t.Errorf("%s:%d: documents %s %s, which %s does not take (see %s --help)", docsCommands, d.flags[flag], name, flag, name, name)
			}
		}
	}
}

// Every command is documented, and so is every flag it declares itself;
// inherited ones are documented once, on the command that declares them.
func TestDocsCommandsComplete(t *testing.T) {
	docs := parseCommandDocs(t)
	root := docsRoot()
	for _, cmd := range append([]*cobra.Command{root}, root.Commands()...) {
		if cmd.Hidden {
			continue
		}
		name := cmd.CommandPath()
		d := docs[name]
		if d == nil {
			t.Errorf("%s documents no %s: add a section headed ## `%s`", docsCommands, name, name)
			continue
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || (f.Name == "help" && cmd != root) {
				return
			}
			if _, ok := d.flags["--"+f.Name]; !ok {
				t.Errorf("%s:%d: %s takes --%s, which its section does not document", docsCommands, d.line, name, f.Name)
			}
		})
	}
}

// Every relative link of README.md and docs/*.md names a file of the
// repository.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	if len(files) < 2 {
		t.Fatalf("no docs/*.md beside README.md")
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range docsLink.FindAllStringSubmatch(line, -1) {
				target, anchor, _ := strings.Cut(m[1], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := file
				if target != "" {
					path = filepath.Join(filepath.Dir(file), target)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: the link %s names no file (%s)", file, i+1, m[1], path)
				} else if anchor != "" && strings.HasSuffix(path, ".md") && !docsHasAnchor(t, path, anchor) {
					t.Errorf("%s:%d: the link %s names no heading of %s", file, i+1, m[1], path)
				}
			}
		}
	}
}

// docsHasAnchor says whether a heading of the Markdown file has the anchor
// GitHub gives it: lower case, punctuation dropped, spaces as hyphens.
func docsHasAnchor(t *testing.T, path, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, strings.TrimSpace(heading))
		if slug == anchor {
			return true
		}
	}
	return false
}
