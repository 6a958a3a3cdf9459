// Package embedded runs the bundled control plane in-process: an etcd Raft
// cluster of real etcd members (go.etcd.io/etcd/server/v3/embed) on loopback
// ports picked at run time.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/etcdscope/etcdscope/embedded/datadir"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Options configures a bundled cluster. The zero value is a 3-member cluster
// in a fresh temporary directory, logging to that directory.
//
// The cluster is its user's alone: clients and members talk TLS, and etcd
// takes only clients with a certificate signed by the CA in DataDir/tls
// (TLS), as kubeadm's etcd does. The data dir must be the user's and not
// writable by others (datadir.Check), and so must the dirs in it.
type Options struct {
	// Members is the number of etcd members; 0 means DefaultMembers, or as
	// many as the cluster reopened from DataDir has.
	Members int
	// DataDir holds the cluster's data. Empty means a fresh temporary
	// directory that Close removes. A directory that already holds a cluster
	// is reopened at the revision it was left at. A missing one is made with
	// mode 0700.
	DataDir string
	// Logger receives etcd's logs. Nil means DataDir/etcd.log: etcd never
	// writes to the terminal.
	Logger *zap.Logger
	// ReadyTimeout bounds how long Start and RestartMember wait for members to
	// serve; 0 means 30s.
	ReadyTimeout time.Duration
}

// Cluster is a running bundled etcd cluster.
type Cluster struct {
	dir     string
	tempDir bool
	tls     *TLSFiles
	logger  *zap.Logger
	logFile *os.File
	timeout time.Duration

	mu      sync.Mutex
	members []*member
}

// DefaultMembers is the size of a bundled cluster: the smallest that keeps a
// quorum with one member down.
const DefaultMembers = 3

// startAttempts bounds retries when a port picked as free is taken by someone
// else before etcd binds it.
const startAttempts = 3

// Start starts a cluster and waits until every member serves clients.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Members < 0 {
		return nil, fmt.Errorf("members must be at least 1, got %d", opts.Members)
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	c := &Cluster{dir: opts.DataDir, timeout: opts.ReadyTimeout}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "etcdscope-")
		if err != nil {
			return nil, fmt.Errorf("create temporary data dir: %w", err)
		}
		c.dir, c.tempDir = dir, true
	} else if err := datadir.Ensure(c.dir); err != nil {
		return nil, err
	}
	if err := c.start(ctx, opts); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	if err := c.openLog(opts.Logger); err != nil {
		return err
	}
	files, err := EnsureTLS(filepath.Join(c.dir, "tls"))
	if err != nil {
		return err
	}
	c.tls = files
	saved, err := readLayout(c.dir)
	if err != nil {
		return err
	}
	if saved != nil {
		if opts.Members != 0 && opts.Members != len(saved.Members) {
			return fmt.Errorf("data dir %s holds a %d-member cluster, not %d", c.dir, len(saved.Members), opts.Members)
		}
		return c.startMembers(ctx, saved, "existing")
	}
	n := opts.Members
	if n == 0 {
		n = DefaultMembers
	}
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		l, err := newLayout(n)
		if err != nil {
			return err
		}
		if lastErr = c.startMembers(ctx, l, "new"); lastErr == nil {
			return writeLayout(c.dir, l)
		}
		if !isAddrInUse(lastErr) {
			return lastErr
		}
		c.stopAll()
		for _, m := range l.Members {
			os.RemoveAll(filepath.Join(c.dir, m.Name))
		}
	}
	return lastErr
}

// startMembers starts every member of the layout, then waits for all of them:
// a new cluster has no quorum until enough members run, so none can be
// awaited alone.
func (c *Cluster) startMembers(ctx context.Context, l *layout, state string) error {
	c.mu.Lock()
	c.members = nil
	for _, ml := range l.Members {
		m := &member{layout: ml, cluster: l, state: state}
		c.members = append(c.members, m)
	}
	members := c.members
	c.mu.Unlock()

	for _, m := range members {
		if err := c.startMember(m); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	for _, m := range members {
		if err := m.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// isAddrInUse says a member could not listen on a port of its layout: embed
// returns the listener's *net.OpError as is, which wraps the bind's errno.
func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE)
}

// StopMember stops member i gracefully: a leader hands leadership over first,
// as etcd does on shutdown. Its data stays for RestartMember.
func (c *Cluster) StopMember(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	return m.stop(false)
}

// KillMember stops member i at once: a leader does not hand leadership
// over, and the others elect a new one after their election timeout, as
// after a crash. Its data stays for RestartMember.
func (c *Cluster) KillMember(i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	return m.stop(true)
}

// RestartMember restarts a stopped member on its data and ports; it rejoins
// the cluster and catches up from the leader.
func (c *Cluster) RestartMember(ctx context.Context, i int) error {
	m, err := c.member(i)
	if err != nil {
		return err
	}
	m.state = "existing"
	if err := c.startMember(m); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return m.waitReady(ctx)
}

func (c *Cluster) member(i int) (*member, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.members) {
		return nil, fmt.Errorf("no member %d: the cluster has %d", i, len(c.members))
	}
	return c.members[i], nil
}

// Members reports each member's state, in member order. A stopped member
// reports its name, ID and URL only.
func (c *Cluster) Members() []MemberStatus {
	c.mu.Lock()
	members := append([]*member(nil), c.members...)
	c.mu.Unlock()
	out := make([]MemberStatus, len(members))
	for i, m := range members {
		out[i] = m.status()
	}
	return out
}

// Endpoints are the client URLs of all members, running or not, as a client
// balancing over the cluster should be given them.
func (c *Cluster) Endpoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	urls := make([]string, len(c.members))
	for i, m := range c.members {
		urls[i] = m.clientURL()
	}
	return urls
}

// DataDir is where the cluster keeps its data, logs and certificates.
func (c *Cluster) DataDir() string { return c.dir }

// LogPath is the file etcd logs to, or "" when the caller passed a logger.
func (c *Cluster) LogPath() string {
	if c.logFile == nil {
		return ""
	}
	return c.logFile.Name()
}

// TLS returns the certificate files: what a client needs (CA, Cert, Key)
// and the members' own pair.
func (c *Cluster) TLS() *TLSFiles { return c.tls }

// ClientConfig is a clientv3 configuration for all members, with the client
// certificate.
func (c *Cluster) ClientConfig() (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:   c.Endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      c.logger.Named("client"),
	}
	tc, err := c.tls.ClientConfig()
	cfg.TLS = tc
	return cfg, err
}

// Close stops every member, closes the log and removes a temporary data dir.
// It is safe to call more than once.
func (c *Cluster) Close() error {
	c.stopAll()
	var errs []error
	if c.logFile != nil {
		c.logger.Sync()
		errs = append(errs, c.logFile.Close())
		c.logFile = nil
	}
	if c.tempDir {
		errs = append(errs, os.RemoveAll(c.dir))
		c.tempDir = false
	}
	return errors.Join(errs...)
}

// stopAll stops the followers together, then the leader. Stopped at the same
// time as its followers, a leader would try to hand leadership to one that is
// going away and wait out etcd's request timeout (7s) before giving up;
// stopped last, it has no one to hand it to and stops at once.
func (c *Cluster) stopAll() {
	c.mu.Lock()
	members := append([]*member(nil), c.members...)
	c.mu.Unlock()
	var followers, leaders []*member
	for _, m := range members {
		if m.status().Leader {
			leaders = append(leaders, m)
		} else {
			followers = append(followers, m)
		}
	}
	for _, group := range [][]*member{followers, leaders} {
		var wg sync.WaitGroup
		for _, m := range group {
			wg.Go(func() { m.stop(false) })
		}
		wg.Wait()
	}
}

// logFileName is where etcd's logs go when the caller passes no logger.
const logFileName = "etcd.log"

// openLog sends etcd's logs to lg, or to a JSON log file in the data dir.
func (c *Cluster) openLog(lg *zap.Logger) error {
	if lg != nil {
		c.logger = lg
		return nil
	}
	f, err := datadir.OpenAppend(filepath.Join(c.dir, logFileName))
	if err != nil {
		return fmt.Errorf("open etcd log: %w", err)
	}
	c.logFile = f
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	c.logger = zap.New(zapcore.NewCore(enc, zapcore.Lock(f), zap.InfoLevel))
	return nil
}
