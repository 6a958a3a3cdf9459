package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An etcdscope that refuses kine's file (main's, before --db reads SQLite)
// leaves its figure not measured, with its words, and the figures it can
// measure and sqlite3's baseline are measured all the same.
func TestKineFileFiguresSayWhyOneIsNotMeasuredAndTimeTheRest(t *testing.T) {
	for _, tool := range []string{"hyperfine", "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (.ci/run installs it): %v", tool, err)
		}
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if out, err := exec.Command("sqlite3", db, "create table kine (name text, value blob); insert into kine values ('/registry/a', 'x')").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	// A stand-in for etcdscope: ls reads the file, du refuses it as main's
	// etcdscope does.
	fake := filepath.Join(dir, "etcdscope")
	script := "#!/bin/sh\ncase \"$3\" in\nls) exec cat \"$2\" >/dev/null;;\n*) echo \"Error: --db $2: no bbolt header\" >&2; exit 1;;\nesac\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := env{etcdscope: fake, runs: 1, tmp: dir}
	rows := kineFileFigures(e, db, []kineFileCmd{{"ls", []string{"ls", "-l", "/registry"}}, {"du", []string{"du", "/registry"}}})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	ls, du := rows[0], rows[1]
	if !ls.measured || ls.ratio == "" || !strings.Contains(ls.ours, "peak RSS") || !strings.Contains(ls.theirs, "sqlite3") {
		t.Errorf("ls row %+v, want it measured beside sqlite3, with a ratio and its peak RSS", ls)
	}
	if du.measured || !strings.Contains(du.ours, "no bbolt header") || !strings.Contains(du.theirs, "sqlite3") {
		t.Errorf("du row %+v, want it not measured, saying what etcdscope said, with sqlite3's time beside", du)
	}
}
