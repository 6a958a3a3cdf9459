package etcdtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// User is a local user made for one test: someone else on the machine, as
// the bundled cluster's security model has it.
type User struct {
	Name     string
	UID, GID int
}

// OtherUser creates a system user without a home for the test and removes
// it when the test ends. Only root can: as another user the test skips,
// and as root it fails when the user cannot be made.
func OtherUser(t testing.TB) User {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("creating another local user takes root")
	}
	name := "etcdscope-" + strings.ToLower(rand.Text()[:8])
	// useradd takes a lock on /etc/passwd, which another test may hold.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return User{Name: name, UID: uid, GID: gid}
}

// Run runs a command as u, with no supplementary groups, an environment of
// PATH alone and / as its working dir, and returns what it wrote to stdout
// and stderr. It waits at most 30s.
func (u User) Run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not end within 30s: %w", name, ctx.Err())
	}
	return out.String(), err
}

// Chown gives path (a link itself, not its target) to u.
func (u User) Chown(t testing.TB, path string) {
	t.Helper()
	if err := os.Lchown(path, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
}

// Refusal is a data dir another user could have prepared, and the words
// of the error that must refuse it: DIR and UID in Want stand for the dir
// and the other user's uid.
type Refusal struct {
	Name, Want string
	// Prepare prepares dir, which exists (mode 0700, the test's), and may
	// link to victim, a file of the test's user.
	Prepare func(t *testing.T, dir, victim string)
}

// ExpectRefusals runs start on a data dir prepared by each case, in a
// subtest, and checks that it fails with one line holding the case's words,
// and that the victim file kept what it held.
func (u User) ExpectRefusals(t *testing.T, cases []Refusal, start func(dir string) error) {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "scope")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.Prepare(t, dir, victim)
			err := start(dir)
			want := strings.NewReplacer("DIR", dir, "UID", strconv.Itoa(u.UID)).Replace(tc.Want)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("start: %v, want one line with %q", err, want)
			}
			if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
				t.Errorf("the file a link pointed to now holds %q", b)
			}
		})
	}
}
