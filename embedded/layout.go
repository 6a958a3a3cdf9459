package embedded

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// layoutFile records member names and ports in the data dir. Peer URLs are
// part of the Raft membership stored in each member's WAL, so a reopened
// cluster must listen where it did before.
const layoutFile = "cluster.json"

type layout struct {
	Token   string         `json:"token"`
	Members []memberLayout `json:"members"`
}

type memberLayout struct {
	Name       string `json:"name"`
	PeerPort   int    `json:"peerPort"`
	ClientPort int    `json:"clientPort"`
}

func (m memberLayout) peerURL() string { return fmt.Sprintf("http://127.0.0.1:%d", m.PeerPort) }

// initialCluster is etcd's --initial-cluster value for the layout.
func (l *layout) initialCluster() string {
	parts := make([]string, len(l.Members))
	for i, m := range l.Members {
		parts[i] = m.Name + "=" + m.peerURL()
	}
	return strings.Join(parts, ",")
}

func newLayout(n int) (*layout, error) {
	token := make([]byte, 8)
	rand.Read(token)
	l := &layout{Token: fmt.Sprintf("etcdscope-%x", token)}
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		l.Members = append(l.Members, memberLayout{
			Name:       fmt.Sprintf("etcd-%d", i),
			PeerPort:   ports[2*i],
			ClientPort: ports[2*i+1],
		})
	}
	return l, nil
}

// readLayout returns the layout saved in dir, or nil when dir holds no
// cluster yet. A client port taken since the last run is replaced: clients
// learn client URLs anew at every start, unlike peer URLs.
func readLayout(dir string) (*layout, error) {
	b, err := os.ReadFile(filepath.Join(dir, layoutFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster layout: %w", err)
	}
	var l layout
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("read cluster layout %s: %w", filepath.Join(dir, layoutFile), err)
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("cluster layout %s lists no members", filepath.Join(dir, layoutFile))
	}
	changed := false
	for i, m := range l.Members {
		if portFree(m.ClientPort) {
			continue
		}
		ports, err := FreePorts(1)
		if err != nil {
			return nil, err
		}
		l.Members[i].ClientPort, changed = ports[0], true
	}
	if changed {
		return &l, writeLayout(dir, &l)
	}
	return &l, nil
}

func writeLayout(dir string, l *layout) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, layoutFile), b, 0o600); err != nil {
		return fmt.Errorf("write cluster layout: %w", err)
	}
	return nil
}

// FreePorts asks the kernel for n distinct free loopback ports. They are free
// when returned, not reserved: Start retries if another process takes one
// before etcd binds it.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
