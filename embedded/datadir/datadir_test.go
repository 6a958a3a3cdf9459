package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is a uid that is not the test's: Linux's overflow uid.
const nobody = 65534

// asRoot skips a case that needs a file of another owner, which only root
// can make.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
}

func writeAt(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("theirs\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func TestWriteFileReplacesASymlinkAndLeavesItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	writeAt(t, target, 0o644)
	link := filepath.Join(dir, "kubeconfig")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("admin credentials\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "theirs\n" {
		t.Errorf("the link's target now holds %q: written through the link", b)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig is %v (%v), want a regular file of mode 0600", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(link); string(b) != "admin credentials\n" {
		t.Errorf("kubeconfig holds %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".kubeconfig.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// refusal is something at PATH that a call must refuse, with an error
// holding want, where PATH stands for the path.
type refusal struct {
	name, want string
	root       bool // only root can prepare it
	prepare    func(t *testing.T, path string)
}

// expectRefusals prepares a path named base in a fresh dir for each case
// and checks that call refuses it.
func expectRefusals(t *testing.T, base string, cases []refusal, call func(path string) error) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root {
				asRoot(t)
			}
			path := filepath.Join(t.TempDir(), base)
			tc.prepare(t, path)
			want := strings.ReplaceAll(tc.want, "PATH", path)
			if err := call(path); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want one that says %q", err, want)
			}
		})
	}
}

func TestOpenAppendRefusesWhatIsNotTheUsersOwnFile(t *testing.T) {
	expectRefusals(t, "etcd.log", []refusal{
		{"symbolic link", "PATH is a symbolic link", false, func(t *testing.T, path string) {
			writeAt(t, path+".target", 0o600)
			os.Symlink(path+".target", path)
		}},
		{"dangling symbolic link", "PATH is a symbolic link", false, func(t *testing.T, path string) { os.Symlink(path+".none", path) }},
		{"writable by others", "PATH is writable by group or others (mode 0666)", false, func(t *testing.T, path string) { writeAt(t, path, 0o666) }},
		{"a FIFO", "PATH is not a regular file", false, func(t *testing.T, path string) { syscall.Mkfifo(path, 0o600) }},
		{"a hard link", "PATH has 2 hard links", false, func(t *testing.T, path string) {
			writeAt(t, path+".other", 0o600)
			os.Link(path+".other", path)
		}},
		{"another user's", "PATH belongs to uid 65534, not you (uid 0): remove it", true, func(t *testing.T, path string) {
			writeAt(t, path, 0o600)
			os.Chown(path, nobody, nobody)
		}},
	}, func(path string) error {
		f, err := OpenAppend(path)
		if err == nil {
			f.Close()
		}
		return err
	})
}

func TestOpenAppendCreatesMode0600AndAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etcd.log")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := OpenAppend(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	fi, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("log holds %q with mode %v, want both lines, mode 0600", b, fi.Mode().Perm())
	}
}

func TestReadPrivateRefusesAKeyOthersCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ca.key")
	writeAt(t, path, 0o644)
	if _, err := ReadFile(path); err != nil {
		t.Errorf("ReadFile of a 0644 file: %v", err)
	}
	if _, err := ReadPrivate(path); err == nil || !strings.Contains(err.Error(), "is readable by group or others (mode 0644)") {
		t.Errorf("ReadPrivate of a 0644 key: %v, want a refusal", err)
	}
	os.Chmod(path, 0o600)
	if b, err := ReadPrivate(path); err != nil || string(b) != "theirs\n" {
		t.Errorf("ReadPrivate of a 0600 key: %q, %v", b, err)
	}
}

func TestEnsureRefusesADirOthersControl(t *testing.T) {
	expectRefusals(t, "scope", []refusal{
		{"writable by others", "data dir PATH is writable by others (mode 0777): chmod go-w PATH", false, func(t *testing.T, dir string) { os.Mkdir(dir, 0o700); os.Chmod(dir, 0o777) }},
		{"writable by its group", "data dir PATH is writable by its group (mode 0770)", false, func(t *testing.T, dir string) { os.Mkdir(dir, 0o700); os.Chmod(dir, 0o770) }},
		{"a symbolic link", "data dir PATH is a symbolic link", false, func(t *testing.T, dir string) { os.Mkdir(dir+".real", 0o700); os.Symlink(dir+".real", dir) }},
		{"a file", "data dir PATH is not a directory", false, func(t *testing.T, dir string) { writeAt(t, dir, 0o600) }},
		{"another user's", "data dir PATH belongs to uid 65534, not you (uid 0): use a directory of your own", true, func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.Chown(dir, nobody, nobody)
		}},
	}, Ensure)
}

func TestEnsureCreatesAMissingDirMode0700(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "scope")
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	if err := Ensure(dir); err != nil {
		t.Errorf("Ensure of the dir it made: %v", err)
	}
}
