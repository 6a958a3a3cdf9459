package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

func TestLsOnAKubernetes17DataFile(t *testing.T) {
	db := kube17 + "boltdb-db"
	keysFile, err := os.ReadFile(kube17 + "boltdb-keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range strings.Fields(string(keysFile)) {
		if strings.HasPrefix(k, "/registry/") {
			keys = append(keys, k)
		}
	}
	out := run(t, "ls", "-l", "--db", db, "/registry")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes in output to a pipe:\n%q", out)
	}
	// Every key lies below exactly one listed entry, which counts it.
	counted := map[string]int{}
	var total int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("line %q is not COUNT PREFIX", line)
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		for _, k := range keys {
			if strings.HasPrefix(k, f[1]) {
				counted[k]++
				n--
			}
		}
		if n != 0 {
			t.Errorf("%s counts %s keys, boltdb-keys.txt has %d below it", f[1], f[0], mustAtoi(f[0])-n)
		}
		total += mustAtoi(f[0])
	}
	for _, k := range keys {
		if counted[k] != 1 {
			t.Errorf("%s lies below %d listed entries, want 1", k, counted[k])
		}
	}
	if got := strings.TrimSpace(run(t, "ls", "--db", db, "/registry/", "--count")); got != strconv.Itoa(len(keys)) {
		t.Errorf("--count says %s, want %d", got, len(keys))
	}
	if got := run(t, "ls", "-l", "--db", db, "/registry/pods/default/pi-dqtsw"); strings.TrimSpace(got) != "1  /registry/pods/default/pi-dqtsw" {
		t.Errorf("ls -l of a key printed %q, want the key itself", got)
	}
	// Without -l, the same entries, names alone.
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		names = append(names, strings.Fields(line)[1])
	}
	if got := strings.TrimSpace(run(t, "ls", "--db", db, "/registry")); got != strings.Join(names, "\n") {
		t.Errorf("ls without -l printed\n%s\nwant the entries of ls -l alone:\n%s", got, strings.Join(names, "\n"))
	}
	if msg := runFails(t, "ls", "--db", db, "/registry", "--rev", "3"); !strings.Contains(msg, "compacted") || !strings.Contains(msg, "241828") {
		t.Errorf("ls at a compacted revision: %q, want it to name the compaction at 241828", msg)
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// failingGet is a source whose level is empty and whose Get fails with
// something other than "not found".
type failingGet struct {
	etcdview.Source
	err error
}

func (f failingGet) Children(context.Context, string, int64) (etcdview.Level, error) {
	return etcdview.Level{Revision: 7}, nil
}

func (f failingGet) Count(context.Context, string, int64) (int64, error) { return 0, nil }

func (f failingGet) Get(context.Context, string, int64) (*etcdview.KV, error) { return nil, f.err }

func TestLsReportsAFailedGetAndListsAMissingKeyAsNothing(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("get /registry/x at rev 7: permission denied")
	if _, err := listLevel(ctx, failingGet{err: refused}, "/registry/x", 0); !errors.Is(err, refused) {
		t.Errorf("ls of a key whose Get fails: err %v, want %v", err, refused)
	}
	if err := printTotal(ctx, cmdutil.Printer{Out: io.Discard}, failingGet{err: refused}, "/registry/x", 0); !errors.Is(err, refused) {
		t.Errorf("ls --count of a key whose Get fails: err %v, want %v", err, refused)
	}
	lvl, err := listLevel(ctx, failingGet{err: fmt.Errorf("get: %w", etcdview.ErrNotFound)}, "/registry/x", 0)
	if err != nil || len(lvl.Children) != 0 {
		t.Errorf("ls of a missing key: %v, %v; want nothing listed and no error", lvl.Children, err)
	}
}

// TestLsPrintsNamesExactToAPipeAndInertToATerminal lists keys holding a
// space, a quote, invalid UTF-8 and an escape sequence: a pipe gets them as
// stored (the README's promise), a terminal quoted, with nothing it obeys.
func TestLsPrintsNamesExactToAPipeAndInertToATerminal(t *testing.T) {
	src := uitest.New()
	keys := []string{"/registry/x/a b", "/registry/x/say \"hi\"", "/registry/x/\xff\xfe", "/registry/x/\x1b]0;t\x07"}
	for _, k := range keys {
		src.Put(k, []byte("v"))
	}
	lvl, err := listLevel(context.Background(), src, "/registry/x", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		var out bytes.Buffer
		if err := printLevel(cmdutil.Printer{Out: &out, P: cmdutil.Palette{TTY: tty, Color: tty}}, lvl, false); err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		slices.Sort(got)
		want := slices.Clone(keys)
		if tty {
			want = []string{`"/registry/x/\x1b]0;t\a"`, `"/registry/x/\xff\xfe"`, "/registry/x/a b", `/registry/x/say "hi"`}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("terminal %v: %q, want %q", tty, got, want)
		}
	}
}
