package controlplane

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/datadir"
)

// StateDirEnv names a state dir to use instead of the user's: tests point
// it at a directory of their own, so that they neither see nor announce
// the clusters the user runs.
const StateDirEnv = "ETCDSCOPE_STATE_DIR"

// State is what a running bundled cluster tells the other etcdscope
// commands of the same user, as kind and k3d leave a kubeconfig context: a
// command with no connection flags reads the cluster its state file names.
type State struct {
	// By is what runs the cluster ("etcdscope serve").
	By      string `json:"by"`
	DataDir string `json:"dataDir"`
	// Endpoints are the members' client URLs.
	Endpoints []string `json:"endpoints"`
	// CA, Cert and Key are the client's TLS files; empty without TLS.
	CA   string `json:"ca,omitempty"`
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
	// Kubeconfig reaches kube-apiserver; empty when it does not run.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// EncryptionConfig is the file kube-apiserver encrypts with (an
	// absolute path), empty when it stores values plain: what reads the
	// cluster decrypts with it.
	EncryptionConfig string `json:"encryptionConfig,omitempty"`
	PID              int    `json:"pid"`
	// StartTime is when the process started, as processStart reads it: a
	// PID the kernel reused for another process has another start time.
	StartTime uint64 `json:"startTime"`

	// Path is the state file this was read from.
	Path string `json:"-"`
}

// maxStateFile bounds what a state file may hold: a handful of paths.
const maxStateFile = 64 << 10

// StateDir is where the user's bundled clusters announce themselves:
// $ETCDSCOPE_STATE_DIR, else etcdscope-UID under $XDG_RUNTIME_DIR, $TMPDIR
// or /tmp.
func StateDir() string {
	if d := os.Getenv(StateDirEnv); d != "" {
		return d
	}
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("etcdscope-%d", os.Getuid()))
}

// announced is the end of Start: cp, announced in StateDir when by is set,
// or stopped again when its state file cannot be written.
func (cp *ControlPlane) announced(by string) (*ControlPlane, error) {
	if by == "" {
		return cp, nil
	}
	if err := cp.announce(StateDir(), by); err != nil {
		return nil, errors.Join(fmt.Errorf("announce the cluster: %w", err), cp.Close())
	}
	return cp, nil
}

// announce writes the state file of cp in dir, created 0700 when missing,
// under a name no other process uses.
func (cp *ControlPlane) announce(dir, by string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := datadir.CheckDir(dir, "state dir"); err != nil {
		return err
	}
	s, err := cp.state(by)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	cp.statePath, err = publish(dir, s.PID, append(b, '\n'))
	return err
}

func (cp *ControlPlane) state(by string) (State, error) {
	dir, err := filepath.Abs(cp.cluster.DataDir())
	if err != nil {
		return State{}, err
	}
	s := State{By: by, DataDir: dir, Endpoints: cp.cluster.Endpoints(), Kubeconfig: cp.apiInfo.Kubeconfig,
		EncryptionConfig: cp.apiInfo.EncryptionConfig, PID: os.Getpid()}
	if f := cp.cluster.TLS(); f != nil {
		s.CA, s.Cert, s.Key = f.CA, f.Cert, f.Key
	}
	s.StartTime, err = processStart(s.PID)
	return s, err
}

// publish writes b to a hidden file and links it to PID.json (PID-N.json
// when this process runs more than one cluster): a reader never sees a
// half-written file, and a name taken is never overwritten.
func publish(dir string, pid int, b []byte) (string, error) {
	tmp := filepath.Join(dir, fmt.Sprintf(".%d-%d.tmp", pid, time.Now().UnixNano()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("write state file: %w", err)
	}
	defer os.Remove(tmp)
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err != nil {
		return "", fmt.Errorf("write state file: %w", err)
	}
	for n := 0; n < 100; n++ {
		name := fmt.Sprintf("%d.json", pid)
		if n > 0 {
			name = fmt.Sprintf("%d-%d.json", pid, n)
		}
		path := filepath.Join(dir, name)
		if err = os.Link(tmp, path); err == nil {
			return path, nil
		}
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	return "", fmt.Errorf("write state file: %w", err)
}

// unannounce removes the state file, first thing on Close: a command
// started now must not pick a cluster that is going away.
func (cp *ControlPlane) unannounce() {
	if cp.statePath != "" {
		os.Remove(cp.statePath)
	}
}

// StatePath is the state file that announces the cluster; "" when none
// does (Options.Announce unset).
func (cp *ControlPlane) StatePath() string { return cp.statePath }

// Running reads the state files in dir and returns the clusters that run,
// sorted by data dir. A stale file (its process gone, or its endpoints
// answered by someone else) is never returned; it is removed when it is
// ours. A missing dir holds none.
func Running(ctx context.Context, dir string) ([]State, error) {
	if err := datadir.CheckDir(dir, "state dir"); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []State
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s, err := readState(path)
		if err != nil {
			continue // not a state file of ours: neither trusted nor removed
		}
		if s.live(ctx) {
			out = append(out, s)
		} else {
			os.Remove(path)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DataDir < out[j].DataDir })
	return out, nil
}

// readState reads a state file that is ours: a regular file, not a link,
// owned by this user and written by no one else.
func readState(path string) (State, error) {
	b, err := datadir.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	if len(b) > maxStateFile {
		return State{}, fmt.Errorf("%s holds %d bytes, more than a state file", path, len(b))
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("%s: %w", path, err)
	}
	if s.PID <= 0 || len(s.Endpoints) == 0 {
		return State{}, fmt.Errorf("%s names no process or no endpoint", path)
	}
	s.Path = path
	return s, nil
}

// live says whether the process that wrote s still runs and, with TLS
// files, whether a member answers a handshake verified with its CA: a port
// someone else took since fails it.
func (s State) live(ctx context.Context) bool {
	if start, err := processStart(s.PID); err != nil || start != s.StartTime {
		return false
	}
	if s.CA == "" {
		return true
	}
	tc, err := (&embedded.TLSFiles{CA: s.CA, Cert: s.Cert, Key: s.Key}).ClientConfig()
	if err != nil {
		return false
	}
	for _, ep := range s.Endpoints {
		if handshake(ctx, ep, tc) == nil {
			return true
		}
	}
	return false
}

// handshakeTimeout bounds the handshake with one member: a loopback member
// answers in milliseconds.
const handshakeTimeout = time.Second

func handshake(ctx context.Context, endpoint string, tc *tls.Config) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return err
	}
	tc = tc.Clone()
	tc.ServerName = host
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tc}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return err
	}
	return conn.Close()
}
