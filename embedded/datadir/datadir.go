// Package datadir keeps the bundled cluster's data dir one user's. A data
// dir may sit in a shared place such as /tmp, where another user can
// prepare it before etcdscope runs: a directory of theirs, a symbolic link
// where a file is to be written, a CA of theirs. So every directory is
// checked before anything is written into it (Ensure), and every file is
// written or read without following links and only when it is the user's
// own (WriteFile, OpenAppend, ReadFile, ReadPrivate).
package datadir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Ensure creates dir (and its parents) with mode 0700 when it is missing,
// and checks it otherwise (Check).
func Ensure(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create data dir: %w", err)
		}
	}
	return Check(dir)
}

// Check says why dir may not hold the cluster's data: it is not a
// directory (a symbolic link to one included: whoever owns the link's
// directory can point it elsewhere), it is not the current user's, or its
// group or others may write into it, and so create, rename or remove what
// is in it.
func Check(dir string) error { return CheckDir(dir, "data dir") }

// CheckDir is Check for a directory of another use, named what in its
// errors ("state dir").
func CheckDir(dir, what string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s %s is a symbolic link: give the directory itself, if it is yours", what, dir)
	case !fi.IsDir():
		return fmt.Errorf("%s %s is not a directory", what, dir)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s %s belongs to uid %d, not you (uid %d): use a directory of your own", what, dir, st.Uid, uid)
	}
	if w := writers(fi.Mode()); w != "" {
		return fmt.Errorf("%s %s is writable by %s (mode %04o): chmod go-w %s", what, dir, w, fi.Mode().Perm(), dir)
	}
	return nil
}

// writers names who besides the owner may write, by mode; "" for nobody.
func writers(mode os.FileMode) string {
	switch {
	case mode&0o002 != 0:
		return "others"
	case mode&0o020 != 0:
		return "its group"
	}
	return ""
}

// WriteFile replaces path with a file of mode 0600 holding data. The file
// is written under a new name in the same dir (created exclusively, so no
// link is followed) and renamed over path: a symbolic link at path is
// replaced, not written through, and a reader never sees half a file.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// OpenAppend opens path for appending, created with mode 0600 when
// missing. An existing path must be a regular file of the current user's
// that neither group nor others may write (a log kept across runs).
func OpenAppend(path string) (*os.File, error) {
	return open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o022)
}

// ReadFile reads path, a regular file of the current user's that neither
// group nor others may write.
func ReadFile(path string) ([]byte, error) {
	return readChecked(path, 0o022)
}

// ReadPrivate reads path as ReadFile does, and also refuses a file that
// group or others may read: a private key is only trusted when nobody else
// could have had it.
func ReadPrivate(path string) ([]byte, error) {
	return readChecked(path, 0o077)
}

func readChecked(path string, forbidden os.FileMode) ([]byte, error) {
	f, err := open(path, os.O_RDONLY, forbidden)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// open opens path without following a symbolic link (O_NOFOLLOW) and then
// checks the file it got, not the name, so nothing can be swapped in
// between: a regular file, the current user's, with one link, without the
// forbidden mode bits. O_NONBLOCK keeps a FIFO put in its place from
// blocking the open. A missing file's error is os.ErrNotExist.
func open(path string, flag int, forbidden os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: remove it", path)
	}
	if errors.Is(err, unix.ENXIO) { // a FIFO no one reads, or a socket
		return nil, fmt.Errorf("%s is not a regular file: remove it", path)
	}
	if err != nil {
		return nil, err
	}
	if err := checkFile(f, forbidden); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkFile(f *os.File, forbidden os.FileMode) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	path, mode := f.Name(), fi.Mode()
	if !mode.IsRegular() {
		return fmt.Errorf("%s is not a regular file: remove it", path)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s belongs to uid %d, not you (uid %d): remove it", path, st.Uid, uid)
	}
	if st.Nlink > 1 {
		// A hard link could make a file of the user's elsewhere (or root's,
		// when root runs etcdscope) the one written to.
		return fmt.Errorf("%s has %d hard links: remove it", path, st.Nlink)
	}
	if bad := mode.Perm() & forbidden; bad != 0 {
		who := "group or others"
		if bad&0o022 == 0 {
			return fmt.Errorf("%s is readable by %s (mode %04o): chmod 0600 %s, or remove it", path, who, mode.Perm(), path)
		}
		return fmt.Errorf("%s is writable by %s (mode %04o): chmod go-w %s, or remove it", path, who, mode.Perm(), path)
	}
	return nil
}
