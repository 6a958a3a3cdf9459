package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACutOrDamagedDataFileIsOneLineOfError: ls, get, history and du of a
// copy cut short, and of one whose pages are not what their parents say,
// fail with one line saying so, exit status 1, where bbolt would panic or
// fault.
func TestACutOrDamagedDataFileIsOneLineOfError(t *testing.T) {
	data, err := os.ReadFile(kube17 + "boltdb-db")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, data[:16384], 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.db")
	for _, page := range []int{2, 3, 4} {
		data[page*4096] ^= 0x40 // the page's id, which bbolt asserts
	}
	if err := os.WriteFile(damaged, data, 0o600); err != nil {
		t.Fatal(err)
	}
	pod := "/registry/pods/default/pi-dqtsw"
	for path, want := range map[string]string{
		cut:     "Error: --db " + cut + " is cut short: the file is 16384 bytes, its header says 20480 (a copy that did not finish?)",
		damaged: "Error: data file " + damaged + " is damaged: assertion failed: Page expected to be: ",
	} {
		for _, args := range [][]string{{"ls", "-l", "/registry"}, {"get", pod}, {"history", pod}, {"du"}} {
			if msg := runFails(t, append([]string{"--db", path, "--db-index=false"}, args...)...); !strings.HasPrefix(msg, want) {
				t.Errorf("%s of %s: %q, want %q", args[0], path, msg, want)
			}
		}
	}
}
