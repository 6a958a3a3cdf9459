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

	"github.com/etcdscope/etcdscope/embedded/datadir"
)

// layoutFile records member names and ports in the data dir. Peer URLs are
// part of the Raft membership stored in each member's WAL, so a reopened
// cluster must listen where it did before.
const layoutFile = "cluster.json"

type layout struct {
	Token string `json:"token"`
	// PeerTLS says the members' peer URLs are https: a data dir made before
	// the bundled cluster always ran TLS has http peer URLs in its WAL, and
	// its members could not reach each other now.
	PeerTLS bool           `json:"peerTLS"`
	Members []memberLayout `json:"members"`
}

type memberLayout struct {
	Name       string `json:"name"`
	PeerPort   int    `json:"peerPort"`
	ClientPort int    `json:"clientPort"`
	// HTTPPort serves etcd's HTTP endpoints (/health, /metrics, /version)
	// apart from gRPC on ClientPort: over TLS, gRPC on a shared port runs
	// under Go's HTTP server (grpc.Server.ServeHTTP), which etcd's
	// --listen-client-http-urls exists to avoid (watch streams starve
	// under load).
	HTTPPort int `json:"httpPort"`
}

func (m memberLayout) peerURL() string { return fmt.Sprintf("https://127.0.0.1:%d", m.PeerPort) }

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
	l := &layout{Token: fmt.Sprintf("etcdscope-%x", token), PeerTLS: true}
	ports, err := FreePorts(3 * n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		l.Members = append(l.Members, memberLayout{
			Name:       fmt.Sprintf("etcd-%d", i),
			PeerPort:   ports[3*i],
			ClientPort: ports[3*i+1],
			HTTPPort:   ports[3*i+2],
		})
	}
	return l, nil
}

// readLayout returns the layout saved in dir, or nil when dir holds no
// cluster yet. A client or HTTP port taken since the last run is replaced:
// clients learn client URLs anew at every start, unlike peer URLs.
func readLayout(dir string) (*layout, error) {
	b, err := datadir.ReadFile(filepath.Join(dir, layoutFile))
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
	if !l.PeerTLS {
		return nil, fmt.Errorf("data dir %s holds a cluster an older etcdscope made without TLS: use a new --data-dir", dir)
	}
	changed := false
	for i := range l.Members {
		for _, port := range []*int{&l.Members[i].ClientPort, &l.Members[i].HTTPPort} {
			if portFree(*port) {
				continue
			}
			ports, err := FreePorts(1)
			if err != nil {
				return nil, err
			}
			*port, changed = ports[0], true
		}
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
	return datadir.WriteFile(filepath.Join(dir, layoutFile), b)
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
