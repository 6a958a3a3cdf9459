package etcdview

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// silentEndpoint accepts TCP connections (the kernel completes the
// handshake) and never answers: an etcd that hangs.
func silentEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func TestErrorsNameTheTimeoutThatEnded(t *testing.T) {
	silent := silentEndpoint(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{silent}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	const dial, command = "no answer within the dial timeout", "no answer within the command timeout"
	l := NewLive(cli, 300*time.Millisecond)
	patient := NewLive(cli, time.Minute)
	tests := []struct {
		name string
		// ctx is the caller's: a minute, or less.
		ctx  func() context.Context
		call func(ctx context.Context) error
		want string // "" when neither timeout of ours ended the call
		is   error
	}{
		{"dial", nil, func(ctx context.Context) error {
			_, err := Dial(ctx, Config{Endpoints: []string{silent}, DialTimeout: 300 * time.Millisecond})
			return err
		}, dial + " (--dial-timeout 300ms)", nil},
		{"get", nil, func(ctx context.Context) error {
			_, err := l.Get(ctx, "/registry/pods/default/a", 0)
			return err
		}, command + " (--command-timeout 300ms)", context.DeadlineExceeded},
		{"children", nil, func(ctx context.Context) error {
			_, err := l.Children(ctx, "/registry/", 0)
			return err
		}, command + " (--command-timeout 300ms)", context.DeadlineExceeded},
		{"history", nil, func(ctx context.Context) error {
			_, err := l.History(ctx, "/registry/pods/default/a", HistoryOptions{})
			return err
		}, command + " (--command-timeout 300ms)", context.DeadlineExceeded},
		{"status", nil, func(ctx context.Context) error {
			_, err := l.Status(ctx)
			return err
		}, command + " (--command-timeout 300ms)", context.DeadlineExceeded},
		{"the caller's own deadline", func() context.Context {
			ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, func(ctx context.Context) error {
			_, err := patient.Get(ctx, "/registry/pods/default/a", 0)
			return err
		}, "", context.DeadlineExceeded},
		{"the caller cancels", func() context.Context {
			ctx, cancel := context.WithCancel(testCtx(t))
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx
		}, func(ctx context.Context) error {
			_, err := patient.Get(ctx, "/registry/pods/default/a", 0)
			return err
		}, "", context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			err := tc.call(ctx)
			if err == nil {
				t.Fatal("a silent etcd answered")
			}
			msg := err.Error()
			if tc.want != "" && !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			for _, other := range []string{dial, command} {
				if !strings.HasPrefix(tc.want, other) && strings.Contains(msg, other) {
					t.Errorf("error %q blames the %s", msg, other[len("no answer within the "):])
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", msg, tc.is)
			}
		})
	}
}

func TestEtcdErrorsComeInEtcdsWords(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		cli := e.Client
		rev := put(t, cli, "/registry/pods/default/a", "1")
		put(t, cli, "/other", "outside the read-only role")
		etcdtest.EnableReadOnlyUser(t, cli)
		ro, err := Connect(testCtx(t), liveConfig(e, etcdtest.ReadOnlyUser, etcdtest.ReadOnlyPassword))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ro.Close() })
		tests := []struct {
			name     string
			call     func(ctx context.Context) error
			want     string
			terminal bool
		}{
			{"a future revision", func(ctx context.Context) error {
				_, err := ro.Get(ctx, "/registry/pods/default/a", rev+100)
				return err
			}, "etcdserver: mvcc: required revision is a future revision", false},
			{"a level at a future revision", func(ctx context.Context) error {
				_, err := ro.Children(ctx, "/registry/", rev+100)
				return err
			}, "etcdserver: mvcc: required revision is a future revision", false},
			{"a key outside the user's role", func(ctx context.Context) error {
				_, err := ro.Get(ctx, "/other", 0)
				return err
			}, "etcdserver: permission denied", true},
			{"a wrong password", func(ctx context.Context) error {
				_, err := Connect(ctx, liveConfig(e, etcdtest.ReadOnlyUser, "wrong"))
				return err
			}, "etcdserver: authentication failed", false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call(testCtx(t))
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "rpc error") {
					t.Fatalf("error %v, want etcd's %q alone", err, tc.want)
				}
				if tc.terminal && !isTerminal(err) {
					t.Errorf("%v is taken for a fault a retry may cure", err)
				}
			})
		}
	})
}

func TestReadsOfAClosedConnectionEndForGood(t *testing.T) {
	c, _ := etcdtest.StartBundled(t, 1)
	closed, err := Connect(testCtx(t), liveConfig(etcdtest.Etcd{Endpoints: c.Endpoints(), TLS: c.TLS()}, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	_, err = closed.Get(testCtx(t), "/registry/pods/default/a", 0)
	if err == nil || !strings.Contains(err.Error(), "the client connection is closing") || strings.Contains(err.Error(), "rpc error") {
		t.Fatalf("error %v, want gRPC's words alone", err)
	}
	if !isTerminal(err) {
		t.Errorf("%v is taken for a fault a retry may cure", err)
	}
}
