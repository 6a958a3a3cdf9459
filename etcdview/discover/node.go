package discover

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// maxFile bounds what is read of one file: a manifest or an etcd config is
// a few KiB, and the node's files are not ours to trust.
const maxFile = 1 << 20

// node is a node's filesystem as this machine sees it, at root: "/" on the
// node itself, /host in `kubectl debug node/NAME --profile=sysadmin`.
type node struct{ root string }

func newNode(hostRoot string) (node, error) {
	if hostRoot == "" {
		hostRoot = "/"
	}
	root, err := filepath.Abs(hostRoot)
	if err != nil {
		return node{}, fmt.Errorf("--host-root %s: %w", hostRoot, err)
	}
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return node{}, &permissionError{path: root, err: err}
	case err != nil:
		return node{}, fmt.Errorf("--host-root %s: %w", hostRoot, pathCause(err))
	case !fi.IsDir():
		return node{}, fmt.Errorf("--host-root %s is not a directory", hostRoot)
	}
	return node{root: root}, nil
}

// shown is path on this machine, as messages name it.
func (n node) shown(path string) string {
	return filepath.Join(n.root, path)
}

// stat finds path, as the node names it, on this machine. Links are
// followed as on the node, inside the root: a link to /etc on a node seen
// at /host leads to /host/etc, never to this machine's /etc. fi is nil
// when the file is absent; a file this user may not even look at is an
// error, never absent (kubeadm's manifests are in a 0700 directory).
func (n node) stat(path string) (local string, fi fs.FileInfo, err error) {
	local, err = securejoin.SecureJoin(n.root, path)
	if err == nil {
		fi, err = os.Stat(local)
	}
	switch {
	case err == nil:
		return local, fi, nil
	case securejoin.IsNotExist(err):
		return local, nil, nil
	}
	return "", nil, n.fileError(path, err)
}

// read is the content of a regular file, ok false when it is absent.
func (n node) read(path string) (data []byte, ok bool, err error) {
	local, fi, err := n.stat(path)
	if err != nil || fi == nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		// A FIFO would block the read forever.
		return nil, false, fmt.Errorf("%s is not a regular file", n.shown(path))
	}
	f, err := os.Open(local)
	if err != nil {
		return nil, false, n.fileError(path, err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxFile+1))
	switch {
	case err != nil:
		return nil, false, n.fileError(path, err)
	case len(data) > maxFile:
		return nil, false, fmt.Errorf("%s is larger than %d bytes: not a manifest or a config", n.shown(path), maxFile)
	}
	return data, true, nil
}

// need is the path on this machine of a file the node's configuration
// names, checked now to be there and readable: the connection would fail
// later with a message that no longer says which file. what names who
// names it ("/etc/kubernetes/manifests/kube-apiserver.yaml's --etcd-cafile").
func (n node) need(path, what string) (string, error) {
	local, fi, err := n.stat(path)
	switch {
	case err != nil:
		return "", err
	case fi == nil:
		return "", fmt.Errorf("%s: %s is not there", what, n.shown(path))
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s: %s is not a regular file", what, n.shown(path))
	}
	f, err := os.Open(local)
	if err != nil {
		return "", n.fileError(path, err)
	}
	f.Close()
	return local, nil
}

// optional is need for a file that may be absent: "" then.
func (n node) optional(path string) (string, error) {
	_, fi, err := n.stat(path)
	if err != nil || fi == nil {
		return "", err
	}
	return n.need(path, path)
}

// fileError names the file on this machine and, when it is the user's
// rights that stop the read, what to do about it.
func (n node) fileError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return &permissionError{path: n.shown(path), err: err}
	}
	return fmt.Errorf("cannot read %s: %w", n.shown(path), pathCause(err))
}

// pathCause drops the path an *fs.PathError repeats: the message names it.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// permissionError is a file of the node that exists but that this user may
// not read: never taken as absent, which would start the bundled cluster
// instead of showing the node's.
type permissionError struct {
	path string
	err  error
}

func (e *permissionError) Error() string {
	return fmt.Sprintf("cannot read %s (permission denied): run it with sudo, or give --endpoints", e.path)
}

func (e *permissionError) Unwrap() error { return e.err }
