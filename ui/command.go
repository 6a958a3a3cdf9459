package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/where"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/tree"
)

func (m *Model) commandKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEsc:
		m.commanding = false
		m.input.Blur()
		return nil
	case tea.KeyEnter:
		m.commanding = false
		m.input.Blur()
		return m.run(m.input.Value())
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// run performs a command line: :q, :rev, :key, :tail, :ctx, or a resource
// name as kubectl takes it with an optional namespace.
func (m *Model) run(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	switch f[0] {
	case "q", "q!", "quit":
		return tea.Quit
	case "rev":
		return m.revCommand(f[1:])
	case "at":
		return m.atCommand(f[1:])
	case "key":
		if len(f) != 2 {
			return m.setFlash(":key takes one key or prefix: :key /registry/pods/default/", true)
		}
		return m.openPath(f[1])
	case "tail":
		prefix := ""
		if len(f) > 1 {
			prefix = f[1]
		}
		return m.tail.Update(m.tailScope(prefix))
	case "help":
		m.helpShown = true
		return nil
	case "du", "space":
		return m.openSpace()
	case "changes":
		return m.openTimeline(f[1:], true)
	case "ctx", "context", "contexts":
		// A name is the rest of the line: a config file may name a
		// cluster with spaces.
		return m.ctxCommand(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0])))
	case "where":
		return m.whereCommand(strings.TrimPrefix(strings.TrimSpace(line), "where"))
	}
	res, ok := decode.LookupResource(f[0])
	if !ok {
		return m.setFlash(fmt.Sprintf("%q is no command and no resource kube-apiserver stores (try :pods, :deploy kube-system, :key, :rev, :q)", f[0]), true)
	}
	ns, err := namespaceArgs(f[0], f[1:])
	if err != nil {
		return m.setFlash(err.Error(), true)
	}
	if ns != "" && !res.Namespaced {
		return m.setFlash(fmt.Sprintf("%s are not namespaced", res.Resource), true)
	}
	return m.openPath(res.KeyPrefix("", ns))
}

// whereCommand filters the browse level or the tail, whichever is in
// front, by a CEL expression; none clears the filter. One that does not
// compile leaves the filter as it was.
func (m *Model) whereCommand(expr string) tea.Cmd {
	expr = strings.TrimSpace(expr)
	var keep func(map[string]any) (bool, error)
	if expr != "" {
		f, err := where.Compile(expr)
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			return m.setFlash(":where "+first, true)
		}
		keep = f.Match
	}
	switch m.screen {
	case Browse:
		return m.browse.tree.SetWhere(expr, keep)
	case Tail:
		return m.tail.SetWhere(expr, keep)
	}
	return m.setFlash(":where filters a level in browse (1) or the tail (2)", true)
}

func (m *Model) tailScope(prefix string) tea.Msg {
	m.show(Tail)
	return common.TailPrefixMsg{Prefix: prefix}
}

// openPath shows a prefix in the tree, or a key in the tree and the object pane.
func (m *Model) openPath(path string) tea.Cmd {
	if !strings.HasPrefix(path, tree.Root) {
		return m.setFlash(fmt.Sprintf("%s is not below %s", path, tree.Root), true)
	}
	cmd := m.browse.goTo(path)
	m.show(Browse)
	return cmd
}

func (m *Model) revCommand(args []string) tea.Cmd {
	if len(args) != 1 {
		return m.setFlash(":rev takes a revision or head", true)
	}
	var rev int64
	if args[0] != "head" {
		var err error
		if rev, err = strconv.ParseInt(args[0], 10, 64); err != nil || rev < 0 {
			return m.setFlash(fmt.Sprintf(":rev %s: a revision is a positive number", args[0]), true)
		}
	}
	c := m.common
	var times etcdview.RecordedTimes
	if m.rec != nil {
		times = m.rec.times
	}
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		return checkRev(ctx, c, times, rev)
	}
}

// namespaceArgs is the namespace the words after a resource name give, as
// kubectl takes them: NS, -n NS, --namespace NS or --namespace=NS; none, -A
// or --all-namespaces for every namespace ("").
func namespaceArgs(resource string, args []string) (string, error) {
	usage := fmt.Errorf(":%s takes a namespace (:%s kube-system, :%s -n kube-system) or -A for every namespace", resource, resource, resource)
	switch {
	case len(args) == 0:
		return "", nil
	case len(args) == 1 && (args[0] == "-A" || args[0] == "--all-namespaces"):
		return "", nil
	case len(args) == 1 && strings.HasPrefix(args[0], "--namespace="):
		args = []string{"-n", strings.TrimPrefix(args[0], "--namespace=")}
	case len(args) == 1:
		args = []string{"-n", args[0]}
	}
	if len(args) != 2 || args[0] != "-n" && args[0] != "--namespace" || args[1] == "" || strings.HasPrefix(args[1], "-") || strings.Contains(args[1], "/") {
		return "", usage
	}
	return args[1], nil
}
