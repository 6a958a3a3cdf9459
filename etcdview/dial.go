// Package etcdview reads etcd state, and only reads it: every read the TUI and
// the CLI make goes through here.
package etcdview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Config is how to reach a live etcd, as etcdctl's connection flags say it.
type Config struct {
	// Endpoints are client URLs or host:port pairs, as etcdctl takes them.
	Endpoints []string
	// CACert, Cert and Key are PEM files; any of them turns TLS on.
	CACert, Cert, Key string
	// InsecureSkipVerify turns TLS on without verifying the server.
	InsecureSkipVerify bool
	Username, Password string
	// DialTimeout bounds connecting; 0 means 2s, etcdctl's default.
	DialTimeout time.Duration
	// CommandTimeout bounds each request; 0 means 5s, etcdctl's default.
	CommandTimeout time.Duration
	// Logger receives the client's logs; nil discards them, so that nothing
	// reaches the terminal the TUI draws on.
	Logger *zap.Logger
}

func (c Config) dialTimeout() time.Duration {
	if c.DialTimeout > 0 {
		return c.DialTimeout
	}
	return DefaultDialTimeout
}

// CommandTimeoutOrDefault is the per-request bound the CLI and TUI use.
func (c Config) CommandTimeoutOrDefault() time.Duration {
	if c.CommandTimeout > 0 {
		return c.CommandTimeout
	}
	return DefaultCommandTimeout
}

func (c Config) tls() (*tls.Config, error) {
	useTLS := c.CACert != "" || c.Cert != "" || c.Key != "" || c.InsecureSkipVerify
	for _, ep := range c.Endpoints {
		useTLS = useTLS || strings.HasPrefix(ep, "https://") || strings.HasPrefix(ep, "unixs:")
	}
	if !useTLS {
		return nil, nil
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("--cert and --key go together: give both or neither")
	}
	info := transport.TLSInfo{CertFile: c.Cert, KeyFile: c.Key, TrustedCAFile: c.CACert, InsecureSkipVerify: c.InsecureSkipVerify}
	tc, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("TLS configuration: %w", err)
	}
	if c.CACert == "" && c.Cert == "" {
		// transport.TLSInfo gives nil for an empty TLSInfo; a plain https://
		// endpoint still needs TLS, verified against the system roots.
		if tc == nil {
			tc = &tls.Config{}
		}
		tc.InsecureSkipVerify = c.InsecureSkipVerify
	}
	return tc, nil
}

// Dial connects to the cluster and checks that at least one endpoint answers
// within the dial timeout. Its error names each endpoint and why it failed.
func Dial(ctx context.Context, c Config) (*clientv3.Client, error) {
	if len(c.Endpoints) == 0 {
		return nil, errors.New("no etcd endpoints given")
	}
	tc, err := c.tls()
	if err != nil {
		return nil, err
	}
	alive, err := probeEndpoints(ctx, c.Endpoints, newDialTimeout(c.dialTimeout()), tc)
	if err != nil {
		return nil, err
	}
	lg := c.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   c.Endpoints,
		TLS:         tc,
		Username:    c.Username,
		Password:    c.Password,
		DialTimeout: c.dialTimeout(),
		Logger:      lg,
		Context:     ctx,
	})
	if err != nil && c.Username != "" && status.Code(err) == codes.Unimplemented {
		// clientv3 authenticates in New, through etcd's Auth service.
		return nil, fmt.Errorf("connect to etcd at %s as %s: it serves no users (%w); kine, for one, has none: connect without --user",
			strings.Join(c.Endpoints, ","), c.Username, plainError(err))
	}
	if err != nil {
		return nil, fmt.Errorf("connect to etcd at %s: %w", strings.Join(c.Endpoints, ","), plainError(err))
	}
	if err := anyAnswers(ctx, cli, alive, newDialTimeout(c.dialTimeout())); err != nil {
		cli.Close()
		return nil, err
	}
	return cli, nil
}

// anyAnswers asks every endpoint for its status in parallel, each within the
// dial timeout, and is satisfied by the first answer: one member down must
// not cost the others their time.
func anyAnswers(ctx context.Context, cli *clientv3.Client, endpoints []string, t *timeout) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	errs := askAll(endpoints, func(ep string) error {
		if _, err := cli.Status(ctx, ep); err != nil {
			return fmt.Errorf("%s: %w", ep, requestError(ctx, err))
		}
		return nil
	})
	var failures []string
	for range endpoints {
		a := <-errs
		if a.v == nil {
			return nil
		}
		failures = append(failures, a.v.Error())
	}
	return fmt.Errorf("cannot reach etcd: %s", strings.Join(failures, "; "))
}

// probeEndpoints opens a connection (and a TLS session when tc is set) to
// every endpoint in parallel, over TCP or to a unix socket (k3s serves
// kine on unix:///var/lib/rancher/k3s/server/kine.sock), so that a refused address or an untrusted
// certificate fails fast with its own words: gRPC would retry until the dial
// timeout and report only that the deadline passed. It returns the endpoints
// that answered, or an error naming why each did not.
func probeEndpoints(ctx context.Context, endpoints []string, t *timeout, tc *tls.Config) ([]string, error) {
	errs := askEach(endpoints, func(ep string) error {
		addr, err := dialAddress(ep)
		if err != nil {
			return err
		}
		var r *refusedError
		err = probe(ctx, addr, t, tc)
		switch {
		case errors.As(err, &r):
			return fmt.Errorf("etcd at %s %w", ep, err)
		case err != nil:
			return fmt.Errorf("%s: %w", ep, err)
		}
		return nil
	})
	var alive, failures []string
	refused := true
	for i, err := range errs {
		var r *refusedError
		switch {
		case err == nil:
			alive = append(alive, endpoints[i])
		case errors.As(err, &r):
			failures = append(failures, err.Error())
		default:
			refused = false
			failures = append(failures, err.Error())
		}
	}
	switch {
	case len(alive) > 0:
		return alive, nil
	case refused:
		// It was reached: "cannot reach" would send the user to the
		// network instead of to the flags.
		return nil, errors.New(strings.Join(failures, "; "))
	}
	return nil, fmt.Errorf("cannot reach etcd: %s", strings.Join(failures, "; "))
}

func probe(ctx context.Context, addr address, t *timeout, tc *tls.Config) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, addr.network, addr.addr)
	if err != nil {
		return causeOf(err, t)
	}
	defer conn.Close()
	if tc == nil {
		return nil
	}
	tc = tc.Clone()
	tc.NextProtos = []string{"h2"} // as gRPC asks
	if tc.ServerName == "" {
		tc.ServerName = addr.serverName
	}
	tconn := tls.Client(conn, tc)
	if err := tconn.HandshakeContext(ctx); err != nil {
		return tlsError(ctx, err, tc)
	}
	return awaitRefusal(ctx, tconn, tc)
}

// refusalWait bounds how long probe waits, after a TLS 1.3 handshake, for
// the server's first answer.
const refusalWait = time.Second

// http2Preface is what an HTTP/2 client sends first (RFC 9113, 3.4); a
// gRPC server answers it with its SETTINGS frame at once.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// awaitRefusal reads the server's first answer to an HTTP/2 preface. In
// TLS 1.3 the client's handshake ends before the server has checked the
// client's certificate: the server's alert (certificate required, bad
// certificate) arrives with the first read, which would be gRPC's, and
// gRPC reports only that the dial timeout passed. Anything but an alert
// is an answer: gRPC judges the rest.
func awaitRefusal(ctx context.Context, conn *tls.Conn, tc *tls.Config) error {
	deadline := time.Now().Add(refusalWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	var b [1]byte
	_, err := conn.Write([]byte(http2Preface))
	if err == nil {
		_, err = conn.Read(b[:])
	}
	if err != nil && remoteAlert(err) != "" {
		return tlsError(ctx, err, tc)
	}
	return nil
}

// remoteAlert is the text of the TLS alert the server sent ("tls:
// certificate required"), or "" when err is none: crypto/tls reports one
// as a net.OpError "remote error" around an unexported alert type.
func remoteAlert(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil {
		return op.Err.Error()
	}
	return ""
}

// tlsError says why the TLS session failed: the server's refusal of the
// client's certificate in the words of the flags that give one, or the
// handshake's own error.
func tlsError(ctx context.Context, err error, tc *tls.Config) error {
	alert := remoteAlert(err)
	noCert := len(tc.Certificates) == 0 && tc.GetClientCertificate == nil
	switch {
	case alert == "tls: certificate required",
		// TLS 1.2 says a missing certificate with the alert of a bad one.
		noCert && alert == "tls: bad certificate":
		return &refusedError{"it requires a client certificate (give --cert and --key)"}
	case alert == "tls: unknown certificate authority":
		return &refusedError{"the client certificate (--cert) is not signed by a CA it trusts"}
	case strings.Contains(alert, "certificate"):
		return &refusedError{"it does not accept the client certificate (--cert): " + alert}
	}
	return fmt.Errorf("TLS handshake: %w", requestError(ctx, err))
}

// refusedError is an endpoint that answered and refused the client.
type refusedError struct{ why string }

func (e *refusedError) Error() string { return "refused the connection: " + e.why }

// address is where an endpoint is dialled, and the name its server's
// certificate is checked for.
type address struct{ network, addr, serverName string }

// dialAddress takes an endpoint as clientv3 does (endpoint.Interpret): a
// unix:// or unixs:// socket, whose certificate is checked for the
// socket's file name, or a TCP endpoint (hostPort).
func dialAddress(ep string) (address, error) {
	for _, scheme := range []string{"unixs:", "unix:"} {
		rest, ok := strings.CutPrefix(ep, scheme)
		if !ok {
			continue
		}
		// unix:///abs/path, unix://rel/path and unix:rel/path.
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return address{}, fmt.Errorf("endpoint %q names no socket", ep)
		}
		return address{"unix", path, filepath.Base(path)}, nil
	}
	host, err := hostPort(ep)
	if err != nil {
		return address{}, err
	}
	name, _, _ := net.SplitHostPort(host)
	return address{"tcp", host, name}, nil
}

// hostPort takes an endpoint as etcdctl does: a URL, or a bare host:port.
func hostPort(ep string) (string, error) {
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("endpoint %q is not a URL or host:port", ep)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "2379"), nil
	}
	return u.Host, nil
}

// causeOf drops Go's "dial tcp 127.0.0.1:1:" prefix: the endpoint is named
// by the caller already. A connect that did not finish in time is t.
func causeOf(err error, t *timeout) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		if errors.Is(err, context.DeadlineExceeded) || op.Timeout() {
			return t
		}
		return op.Err
	}
	return err
}

// timeout is a deadline etcdscope sets on its own calls, and the cause of
// the context it sets it on (context.WithTimeoutCause), so that an error
// that ends with it names the flag that sets it: the dial timeout and the
// command timeout fail alike in gRPC and clientv3, as a bare
// context.DeadlineExceeded.
type timeout struct {
	name, flag string
	after      time.Duration
}

func newDialTimeout(d time.Duration) *timeout { return &timeout{"dial timeout", "--dial-timeout", d} }

func newCommandTimeout(d time.Duration) *timeout {
	return &timeout{"command timeout", "--command-timeout", d}
}

func (t *timeout) Error() string {
	return fmt.Sprintf("no answer within the %s (%s %v)", t.name, t.flag, t.after)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold for it.
func (t *timeout) Unwrap() error { return context.DeadlineExceeded }

// bound is ctx ended after t, with t as the cause.
func (t *timeout) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, t.after, t)
}

// requestError says why a call made under ctx failed, in the user's words:
// the timeout of ours that ended ctx ("no answer within the command timeout
// (--command-timeout 5s)"), or what plainError makes of it.
func requestError(ctx context.Context, err error) error {
	var t *timeout
	if (errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded) && errors.As(context.Cause(ctx), &t) {
		return t
	}
	return plainError(err)
}

// plainError turns a gRPC status error into its message: users read
// "grpc: the client connection is closing", not "rpc error: code = ...",
// while status.Code still classifies it. etcd's own errors come from
// clientv3 as rpctypes.EtcdError, whose text is its message already
// ("etcdserver: authentication failed") and which errors.Is matches against
// rpctypes' values.
func plainError(err error) error {
	if s, ok := status.FromError(err); ok {
		return statusError{s}
	}
	return err
}

// statusError is a gRPC status in the words of its message alone.
type statusError struct{ s *status.Status }

func (e statusError) Error() string { return e.s.Message() }

// GRPCStatus is what status.Code and status.FromError read.
func (e statusError) GRPCStatus() *status.Status { return e.s }
